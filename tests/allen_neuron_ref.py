"""NEURON through bmtk for tests/test_allen_neuron.py: one Allen cell built by bmtk's own code
(its Biophys1 template, aibs_perisomatic / aibs_allactive of
bmtk/simulator/bionet/default_setters/cell_models.py, its set_segment_dl rule), a current step at
soma(0.5), fixed step. Runs in the reference venv (scripts/ref-venv.sh: bmtk 1.2.0, NEURON 9.0.2).

Usage: python allen_neuron_ref.py --mechanisms DIR_WITH_NRNIVMODL_OUTPUT --fit F --swc S
       --processing P --amp nA --delay ms --dur ms --tstop ms --dt ms --dl um --out ref.json
Writes {"dt": [...], "runs": [{"dt", "t", "v", "cai", "spikes"}]} for dt and dt/2; spikes are
upward crossings of -10 mV at soma(0.5), interpolated linearly inside the step (cablesim's rule).
"""

import argparse
import glob
import json
import os
import sys


def build(h, args):
    import bmtk
    from bmtk.simulator.bionet.default_setters import cell_models as cm
    tpl = os.path.join(os.path.dirname(bmtk.__file__), "simulator", "bionet", "default_templates", "Biophys1.hoc")
    h.load_file("stdrun.hoc")
    h.load_file("import3d.hoc")
    h.load_file(tpl)
    with open(args.fit) as f:
        params = json.load(f)
    hobj = h.Biophys1(args.swc)
    getattr(cm, args.processing)(hobj, None, params)
    for sec in hobj.all:  # bmtk's Morphology.set_segment_dl
        sec.nseg = 1 + 2 * int(sec.L / (2 * args.dl))
    cond = params["conditions"][0]
    return hobj, float(cond.get("celsius", 34.0)), float(cond.get("v_init", -65.0))


def run(h, hobj, celsius, v_init, args, dt):
    soma = hobj.soma[0]
    stim = h.IClamp(soma(0.5))
    stim.delay, stim.dur, stim.amp = args.delay, args.dur, args.amp
    tv, vv, cv = h.Vector(), h.Vector(), h.Vector()
    tv.record(h._ref_t)
    vv.record(soma(0.5)._ref_v)
    if h.ismembrane("ca_ion", sec=soma):
        cv.record(soma(0.5)._ref_cai)
    h.celsius = celsius
    h.dt = dt
    h.steps_per_ms = 1.0 / dt
    h.secondorder = 0
    h.finitialize(v_init)
    n = int(round(args.tstop / dt))
    for _ in range(n):
        h.fadvance()
    t, v, c = list(tv), list(vv), list(cv)
    spikes = [t[k - 1] + (t[k] - t[k - 1]) * (-10.0 - v[k - 1]) / (v[k] - v[k - 1])
              for k in range(1, len(v)) if v[k - 1] < -10.0 <= v[k]]
    return {"dt": dt, "t": t, "v": v, "cai": c, "spikes": spikes}


def main():
    ap = argparse.ArgumentParser()
    for k in ("mechanisms", "fit", "swc", "processing", "out"):
        ap.add_argument("--" + k, required=True)
    for k in ("amp", "delay", "dur", "tstop", "dt", "dl"):
        ap.add_argument("--" + k, type=float, required=True)
    args = ap.parse_args()
    from neuron import h
    lib = glob.glob(os.path.join(args.mechanisms, "*", "libnrnmech.so")) + \
        glob.glob(os.path.join(args.mechanisms, "*", ".libs", "libnrnmech.so"))
    if not lib:
        print("no libnrnmech.so under %s" % args.mechanisms)
        return 1
    h.nrn_load_dll(lib[0])
    hobj, celsius, v_init = build(h, args)
    runs = [run(h, hobj, celsius, v_init, args, args.dt), run(h, hobj, celsius, v_init, args, args.dt / 2)]
    with open(args.out, "w") as f:
        json.dump({"celsius": celsius, "v_init": v_init, "runs": runs}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())

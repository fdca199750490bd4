#!/usr/bin/python3
"""SONATA circuits built with bmtk, run by bmtk + NEURON 9 and by `cablesim run
simulation_config.json` (issue 31, item 5). tests/sonata/bmtk_network.py builds each network
with bmtk's NetworkBuilder in the reference venv (scripts/ref-venv.sh: bmtk 1.2.0, NEURON 9.0.2)
and runs bmtk on it; cablesim runs the same circuit from a config that differs only in
output_dir.

  ff:        virtual Poisson inputs → 6 cells → 4 cells, synapses at explicit
             afferent_section_id/pos: every cell's spike count equal, and every spike time
             within TOL_FF = 0.1 ms of bmtk's (NEURON reports a spike at the end of the step in
             which v crossed, cablesim interpolates within it: up to one dt, 0.025 ms, per
             layer).
  recurrent: 40 virtual inputs → 30 exc + 10 inh cells, recurrent, synapses placed by bmtk's
             rule (target_sections + distance_range; our generator is not numpy's, so the
             places differ): each population's firing rate within TOL_RATE = 10 % of bmtk's.
Both also check bmtk's own analysis reading cablesim's output (bmtk.analyzer.spike_trains with
the config), and the number of spikes it finds. Prints the figures, then 'N passed, N failed'.

Usage: test_sonata_bmtk.py --cablesim PATH --source-dir DIR --work-dir DIR
Exit: 0 all passed, 1 a check failed, 77 skipped (no reference venv: bmtk / NEURON 9 from PyPI).
"""
import argparse
import os
import shutil
import subprocess
import sys

TOL_FF = 0.1     # [ms]
TOL_RATE = 0.10  # relative

ANALYSE = """
import sys
from bmtk.analyzer.spike_trains import to_dataframe
df = to_dataframe(config_file=sys.argv[1])
print(len(df))
"""


def ref_python(src):
    try:
        out = subprocess.run([os.path.join(src, "scripts/ref-venv.sh")], cwd=src, check=True,
                             capture_output=True, text=True, timeout=1800).stdout.strip().splitlines()
        return out[-1] if out else None
    except (subprocess.SubprocessError, OSError):
        return None


def spikes(path):
    import h5py
    out = {}
    with h5py.File(path, "r") as f:
        for pop in f["spikes"]:
            g = f["spikes"][pop]
            for i, t in zip(g["node_ids"][()], g["timestamps"][()]):
                out.setdefault((pop, int(i)), []).append(float(t))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()
    try:
        import h5py  # noqa: F401
        import numpy as np
    except ImportError:
        print("skipped: h5py/numpy missing")
        return 77
    py = ref_python(a.source_dir)
    if not py:
        print("skipped: the reference venv (scripts/ref-venv.sh: bmtk, NEURON 9 from PyPI) is not available")
        return 77
    helper = os.path.join(a.source_dir, "tests/sonata/bmtk_network.py")
    mechs = os.path.join(a.source_dir, "tests/data/sonata/mechanisms")
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print(("PASS " if ok else "FAIL ") + what)
        passed, failed = passed + ok, failed + (not ok)

    for kind in ("ff", "recurrent"):
        d = os.path.join(a.work_dir, kind)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        subprocess.run([py, helper, "build", kind, d, mechs], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([py, helper, "run", os.path.join(d, "config_bmtk.json")], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        env = dict(os.environ, CABLESIM_CACHE_DIR=os.path.join(a.work_dir, "cache"))
        subprocess.run([a.cablesim, "run", os.path.join(d, "config_cs.json"), "--backend", "cpu", "-q"], check=True,
                       env=env)
        ref = spikes(os.path.join(d, "output_bmtk/spikes.h5"))
        ours = spikes(os.path.join(d, "output_cs/spikes.h5"))
        n_ours = sum(len(v) for v in ours.values())
        if kind == "ff":
            cells = sorted(set(ref) | set(ours))
            worst, counts_equal, fewest = 0.0, True, min(len(ref.get(c, [])) for c in cells) if cells else 0
            for c in cells:
                x, y = np.array(ref.get(c, [])), np.array(ours.get(c, []))
                if len(x) != len(y):
                    counts_equal = False
                    print(f"  {c}: bmtk {len(x)} spikes, cablesim {len(y)}")
                    continue
                if len(x):
                    worst = max(worst, float(np.max(np.abs(x - y))))
            print(f"  ff: {len(cells)} cells, {n_ours} spikes, the fewest per cell {fewest}; max |t - t_bmtk| = {worst:.4f} ms")
            check(len(cells) == 10 and fewest >= 3, "ff: all 10 cells fire (>= 3 spikes each)")
            check(counts_equal, "ff: every cell's spike count equals bmtk's")
            check(counts_equal and worst <= TOL_FF, f"ff: every spike within {TOL_FF} ms of bmtk's ({worst:.4f} ms)")
        else:
            for name, ids in (("exc", range(0, 30)), ("inh", range(30, 40))):
                r_ref = sum(len(ref.get(("v1", i), [])) for i in ids) / len(ids)   # [spikes/s]: 1 s run
                r_ours = sum(len(ours.get(("v1", i), [])) for i in ids) / len(ids)
                rel = abs(r_ours - r_ref) / r_ref if r_ref else float("inf")
                print(f"  recurrent {name}: bmtk {r_ref:.2f} Hz, cablesim {r_ours:.2f} Hz ({100 * rel:.1f} %)")
                check(r_ref >= 2 and rel <= TOL_RATE, f"recurrent {name}: rate within {100 * TOL_RATE:.0f} % of bmtk's")
        out = subprocess.run([py, "-c", ANALYSE, os.path.join(d, "config_cs.json")], capture_output=True, text=True)
        n_bmtk = int(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 and out.stdout.strip() else -1
        check(n_bmtk == n_ours, f"{kind}: bmtk's analyzer reads cablesim's spikes ({n_bmtk} of {n_ours})")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Which ASSIGNED variables the generated current keeps in locals (nmodl_codegen:
Gen.outputs_local): those its own BREAKPOINT sets before reading them and that nothing else reads
(the state update, NET_RECEIVE, what the current calls) are stored to the instance's arrays only
when the view's skip_outputs is 0 (a probe may read them). A variable NET_RECEIVE reads, one the
update reads, one set only on one branch of an if, and the STATEs are stored as before. (That a
probe of them still reads them: the GPU sets skip_outputs only where no probe reads a state, and
tests/test_nmodl_gpu.py compares exp2syn_ring's probes of syn.g with the CPU's.)

Usage: test_nmodl_current_outputs.py --cablesim PATH --source-dir DIR --work-dir DIR
"""
import re
import sys

from checks import Tally, arguments, generated_function

MOD = """NEURON {
    POINT_PROCESS osyn
    RANGE tau1, tau2, e, i, g, gmax, last, cut
    NONSPECIFIC_CURRENT i
}
PARAMETER { tau1 = 0.5 (ms) tau2 = 3 (ms) e = 0 (mV) }
ASSIGNED { v (mV) i (nA) g (uS) factor gmax last cut }
STATE { A (uS) B (uS) }
INITIAL { A = 0 B = 0 factor = 1 gmax = 0 last = 0 cut = 0 }
BREAKPOINT { SOLVE state METHOD cnexp
    g = B - A
    i = g * (v - e)
    last = g
    if (v > 0) { cut = 1 } }
DERIVATIVE state {
    A' = -A / tau1 + 0 * last
    B' = -B / tau2 }
NET_RECEIVE(weight (uS)) {
    A = A + weight * factor
    B = B + weight * factor
    if (g > gmax) { gmax = g } }
"""


def main():
    a = arguments()
    t = Tally()
    got = generated_function(t, a.source_dir, a.work_dir, "osyn", MOD, "static CS_HD double _currents")
    if not got:
        return t.summary()
    cur, name = got
    local = sorted(name[int(j)] for j in re.findall(r"\b_o(\d+)\b = ", cur))
    # g is read by NET_RECEIVE, last by the update, cut set on one branch only: stored as before
    t(local == ["i"], "kept in a local: i only (g read by NET_RECEIVE, last by the update, cut on a branch): %s" % local)
    guarded = cur[cur.index("skip_outputs"):] if "skip_outputs" in cur else ""
    stored = sorted(name[int(j)] for j in re.findall(r"_S\((\d+)\) = _o", guarded))
    t(stored == ["i"], "stored where skip_outputs is 0: %s" % stored)
    direct = sorted({name[int(j)] for j in re.findall(r"_S\((\d+)\) = (?!_o)", cur)})
    t(direct == ["cut", "g", "last"], "the others stored directly, as before: %s" % direct)
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())

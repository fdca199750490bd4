#!/usr/bin/python3
"""Which calls the NMODL compiler memoizes on the CPU (nmodl_codegen.Gen.memo_call): exp and pow
whose arguments are parameters, constants, dt or celsius only, in the state update and the
currents; never one that reads v, a STATE, an ASSIGNED variable, a LOCAL or a FUNCTION's
argument, whose value changes from instance to instance or step to step; never in INITIAL. A
memo at a wrong site would still give exact values (the memo compares the arguments' bits:
tests/test_nmodl_memo.c) but cost time; a missed site costs the CPU ~30 % on Allen networks.

Usage: test_nmodl_memo_sites.py --cablesim PATH --source-dir DIR --work-dir DIR
"""
import os
import re
import sys

from checks import Tally, arguments, generate_c

MOD = """NEURON {
    SUFFIX memo
    NONSPECIFIC_CURRENT i
    RANGE tau, g
}
PARAMETER { tau = 2 (ms) g = 0.001 (S/cm2) q10 = 3 }
ASSIGNED { v (mV) i (mA/cm2) celsius (degC) minf tinf }
STATE { m n }
INITIAL { LOCAL tp
    tp = 0.5 * tau
    m = exp(-tp / tau)
    n = exp(-dt / tau) }
BREAKPOINT { SOLVE states METHOD cnexp
    i = g * m * n * (v + 70) }
DERIVATIVE states { LOCAL qt
    qt = q10 ^ ((celsius - 6.3) / 10)
    rates(v)
    m' = (minf - m) / tinf
    n' = -n / tau * qt }
PROCEDURE rates(u (mV)) {
    minf = 1 / (1 + exp(-(u + 40) / 9))
    tinf = pow(2, m) + exp(-dt / tau)
}
"""


def main():
    a = arguments()
    t = Tally()
    r, gen = generate_c(a.source_dir, os.path.abspath(a.work_dir), {"memo": MOD})
    t(r.returncode == 0, "the mod file compiles (%s)" % r.stderr.strip())
    if r.returncode:
        return t.summary()
    body = open(os.path.join(gen, "memo_body.h")).read()
    c = open(os.path.join(gen, "memo.c")).read()

    def function(name):
        m = re.search(r"static CS_HD \w+ %s\(.*?\n}\n" % name, body, re.S)
        return m.group(0) if m else ""

    init, rates, advance = function("_init_one"), function("_p_rates"), function("_advance_onem")
    t("cs_nmodl_" not in init, "INITIAL: nothing memoized (it runs once)")
    t("cs_nmodl_pow_m(_c->memo" in advance and "q10" not in advance,
      "the state update: q10 ^ ((celsius - 6.3) / 10) memoized")
    t(re.search(r"[^_]exp\(\(_c->m->dt \* \(\(\(-1\.0\) / _P\(0\)\) \* _l_qt\)\)\)", advance),
      "the state update: n' = -n / tau * qt's exp not memoized (qt is a LOCAL)")
    t(re.search(r"cs_nmodl_exp_m\(_c->memo \? _c->memo \+ \d+ : NULL, \(\(-_c->m->dt\) / _P\(0\)\)\)", rates),
      "a PROCEDURE: exp(-dt / tau) memoized")
    t(re.search(r"[^_]exp\(\(\(-\(_a_u", rates),
      "a PROCEDURE: exp(-(u + 40) / 9) of its argument not memoized")
    t(re.search(r"[^_]pow\(2\.0, _S\(0\)\)", rates), "pow(2, m) of a STATE not memoized")
    t(re.search(r"[^_]exp\(.*_S\(\d\).*\)", advance) or "(1.0 - exp(" in advance,
      "m' = (minf - m) / tinf: exp(-dt / tinf) of an ASSIGNED not memoized")
    t(re.search(r"cs_nmodl_memo memo\[\d+\];", c) and "_advance_onem(m, k, memo)" in c and
      "_current_onem(m, k, &i, &g, ion, memo)" in c, "the CPU's loops pass a memo")
    t("_advance_onem(_m, _k, NULL)" in body, "the GPU's entry point passes none")
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Which state updates the NMODL compiler marks ion-free (cs_mech_type.advance_ion_free, found by
nmodl_codegen.reaches_ions): the CUDA backend runs an ion-free update while the next step's ion
currents are zeroed and its reversal potentials recomputed, so a wrong 1 would let an update read
e or i while they change (a race). Marked 1 only when the SOLVEd block, and every FUNCTION and
PROCEDURE it calls, directly or through others, touch no ion variable; an ion read in the
BREAKPOINT only (the currents) does not count.

Usage: test_nmodl_advance_ions.py --cablesim PATH --source-dir DIR --work-dir DIR
"""
import os
import re
import sys

from checks import Tally, arguments, generate_c

HEAD = """NEURON {{ SUFFIX {name} USEION na READ ena WRITE ina {extra} RANGE g }}
PARAMETER {{ g = 0.001 (S/cm2) }}
ASSIGNED {{ v (mV) ena (mV) ina (mA/cm2) minf tinf {assigned} }}
STATE {{ m }}
INITIAL {{ m = 0 }}
BREAKPOINT {{ SOLVE states METHOD cnexp
    ina = g * m * (v - ena) }}
"""
MODS = {
    # the ion only in the currents: free
    "free": ("", "", "DERIVATIVE states { rates(v)\n m' = (minf - m) / tinf }\n"
             "PROCEDURE rates(u (mV)) { minf = 1 / (1 + exp(-(u + 40) / 9))\n tinf = 1 }\n"),
    # ena read two calls down from the SOLVEd block: not free
    "deep": ("", "", "DERIVATIVE states { rates(v)\n m' = (minf - m) / tinf }\n"
             "PROCEDURE rates(u (mV)) { minf = shift(u)\n tinf = 1 }\n"
             "FUNCTION shift(u (mV)) { shift = 1 / (1 + exp(-(u - ena) / 9)) }\n"),
    # a concentration read in the DERIVATIVE block itself: not free
    "conc": ("USEION ca READ cai", "cai (mM)", "DERIVATIVE states { m' = (cai - m) / 2 }\n"),
}


def main():
    a = arguments()
    t = Tally()
    r, gen = generate_c(a.source_dir, os.path.abspath(a.work_dir),
                        {name: HEAD.format(name=name, extra=extra, assigned=assigned) + body
                         for name, (extra, assigned, body) in MODS.items()})
    t(r.returncode == 0, "the mod files compile (%s)" % r.stderr.strip())
    if r.returncode:
        return t.summary()
    for name, want in (("free", 1), ("deep", 0), ("conc", 0)):
        c = open(os.path.join(gen, name + ".c")).read()
        got = re.search(r"\.advance_ion_free = (\d)", c)
        t(got and int(got.group(1)) == want, "%s: advance_ion_free = %s (want %d)" % (
            name, got.group(1) if got else "missing", want))
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())

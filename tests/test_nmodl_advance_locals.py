#!/usr/bin/python3
"""Which of an instance's state slots the generated state update loads first (nmodl_codegen:
Gen.advance_entry, slots_set_first): the STATEs and whatever it reads before setting, but not the
ASSIGNED rates that rates() sets before they are read (loading those costs memory traffic in a
hot loop and is never used); a rate set only on one branch of an if is loaded (on the other path
its old value is written back). Every slot the update assigns is written back.

Usage: test_nmodl_advance_locals.py --cablesim PATH --source-dir DIR --work-dir DIR
"""
import re
import sys

from checks import Tally, arguments, generated_function

MOD = """NEURON {
    SUFFIX loc
    NONSPECIFIC_CURRENT i
    RANGE g
}
PARAMETER { g = 0.001 (S/cm2) }
ASSIGNED { v (mV) i (mA/cm2) minf mtau hinf }
STATE { m h }
BREAKPOINT { SOLVE states METHOD cnexp
    i = g * m * h * (v + 70) }
INITIAL { rates(v)
    m = minf
    h = hinf }
DERIVATIVE states { rates(v)
    m' = (minf - m) / mtau
    h' = (hinf - h) / 2 }
PROCEDURE rates(vm (mV)) {
    minf = 1 / (1 + exp(-vm / 10))
    mtau = 1 + exp(-vm / 20)
    if (vm > 0) { hinf = 0 }
}
"""


def main():
    a = arguments()
    t = Tally()
    got = generated_function(t, a.source_dir, a.work_dir, "loc", MOD, "static CS_HD void _advance_onem")
    if not got:
        return t.summary()
    adv, name = got
    loaded = {int(j) for j in re.findall(r"_sv\[(\d+)\] = _m0->state", adv)}
    stored = {int(j) for j in re.findall(r"_m0->state\[(\d+)\]\[_k0\] = _sv", adv)}
    got = sorted(name[j] for j in loaded)
    t(got == ["h", "hinf", "m"], "loaded first: the STATEs and hinf (set on one branch only), not minf, mtau: %s" % got)
    got = sorted(name[j] for j in stored)
    t(got == ["h", "hinf", "m", "minf", "mtau"], "written back: every slot the update assigns: %s" % got)
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Which synapse types the NMODL compiler marks linear (cs_mech_type.linear, found by
nmodl/nmodl_linear.py): the network builder merges a cell's synapses of a linear type at one
compartment with equal parameters into one instance (coalesced synapses), which is exact only when
the state update and the current are linear and homogeneous in the states, NET_RECEIVE only adds
state-free increments and INITIAL starts the states at 0. A wrong 1 would silently change a
network's dynamics (k synapses acting as one with the wrong sum), so each way a type can fail
that is here, beside the linear ones (NEURON's ExpSyn and Exp2Syn, a coupled pair solved by
derivimplicit).

Usage: test_nmodl_linear.py --cablesim PATH --source-dir DIR --work-dir DIR
"""
import os
import re
import sys

from checks import Tally, arguments, generate_c

SYN = """NEURON {{ POINT_PROCESS {name} RANGE tau, e, gmax NONSPECIFIC_CURRENT i }}
PARAMETER {{ tau = 2 (ms) e = 0 (mV) gmax = 0.001 (uS) }}
ASSIGNED {{ v (mV) i (nA) tlast (ms) }}
STATE {{ g (uS) }}
INITIAL {{ {init} }}
BREAKPOINT {{ SOLVE state METHOD cnexp
    {current} }}
DERIVATIVE state {{ {deriv} }}
NET_RECEIVE({args}) {{ {receive} }}
{extra}"""

BASE = dict(init="g = 0", current="i = g*(v - e)", deriv="g' = -g/tau", args="weight (uS)",
            receive="g = g + weight", extra="")

VARIANTS = {
    "expsyn": ({}, 1),
    # a source term: k instances would relax to k times the target
    "source": (dict(deriv="g' = (gmax - g)/tau"), 0),
    # INITIAL away from 0: the merged state would start at one instance's value, not k times it
    "init": (dict(init="g = gmax"), 0),
    # an event that scales the state: depends on the state, not only on the weight
    "scale": (dict(receive="g = 2*g + weight"), 0),
    # per-instance bookkeeping written by an event
    "bookkeeping": (dict(receive="tlast = t\n g = g + weight"), 0),
    # a constant conductance beside the state's: k instances carry k of it
    "leak": (dict(current="i = (gmax + g)*(v - e)"), 0),
    # a current not linear in the state
    "quadratic": (dict(current="i = g*g*(v - e)"), 0),
    # a branch on the state
    "branch": (dict(current="if (g > gmax) { i = gmax*(v - e) } else { i = g*(v - e) }"), 0),
    # a weight vector (NET_RECEIVE with several arguments)
    "vector": (dict(args="weight (uS), u", receive="g = g + weight*u"), 0),
    # a procedure call in the update (it could write anything)
    "call": (dict(deriv="rates()\n g' = -g/tau", extra="PROCEDURE rates() { tlast = 0 }"), 0),
    # an event that depends on where the state is (a branch in NET_RECEIVE)
    "gate": (dict(receive="if (g < gmax) { g = g + weight }"), 0),
}

EXP2SYN = """NEURON { POINT_PROCESS e2 RANGE tau1, tau2, e, i, g NONSPECIFIC_CURRENT i }
PARAMETER { tau1 = 0.1 (ms) tau2 = 10 (ms) e = 0 (mV) }
ASSIGNED { v (mV) i (nA) g (uS) factor }
STATE { A (uS) B (uS) }
INITIAL { LOCAL tp
    if (tau1/tau2 > 0.9999) { tau1 = 0.9999*tau2 }
    A = 0
    B = 0
    tp = (tau1*tau2)/(tau2 - tau1) * log(tau2/tau1)
    factor = 1/(-exp(-tp/tau1) + exp(-tp/tau2)) }
BREAKPOINT { SOLVE state METHOD cnexp
    g = B - A
    i = g*(v - e) }
DERIVATIVE state { A' = -A/tau1
    B' = -B/tau2 }
NET_RECEIVE(weight (uS)) { A = A + weight*factor
    B = B + weight*factor }
"""

COUPLED = """NEURON { POINT_PROCESS cpl RANGE tau1, tau2, e NONSPECIFIC_CURRENT i }
PARAMETER { tau1 = 1 (ms) tau2 = 5 (ms) e = 0 (mV) }
ASSIGNED { v (mV) i (nA) }
STATE { a b }
INITIAL { a = 0 b = 0 }
BREAKPOINT { SOLVE s METHOD derivimplicit
    i = b*(v - e) }
DERIVATIVE s { b' = (a - b)/tau2
    a' = -a/tau1 }
NET_RECEIVE(w (uS)) { a = a + w }
"""

# g = B - A computed from the states and then reset to a constant: no longer homogeneous
EXP2SYN_RESET = EXP2SYN.replace("i = g*(v - e) }", "g = 0.001\n    i = g*(v - e) }").replace("e2", "e2reset")


def main():
    a = arguments()
    t = Tally()
    mods = {}
    for name, (over, _) in VARIANTS.items():
        mods[name] = SYN.format(name=name, **dict(BASE, **over))
    mods["e2"], mods["cpl"], mods["e2reset"] = EXP2SYN, COUPLED, EXP2SYN_RESET
    want = {name: w for name, (_, w) in VARIANTS.items()}
    want.update(e2=1, cpl=1, e2reset=0)
    r, gen = generate_c(a.source_dir, os.path.abspath(a.work_dir), mods)
    t(r.returncode == 0, "the mod files compile (%s)" % r.stderr.strip())
    if r.returncode:
        return t.summary()
    for name, w in want.items():
        c = open(os.path.join(gen, name + ".c")).read()
        got = re.search(r"\.linear = (\d)", c)
        t(got and int(got.group(1)) == w, "%s: linear = %s (want %d)" % (name, got.group(1) if got else "missing", w))
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())

: A coupled linear DERIVATIVE system solved by derivimplicit (b' reads a, updated after it):
: written here for tests/test_nmodl_neuron.py (model cplsyn_ring); NEURON solves the two
: equations simultaneously (Newton), cablesim by one backward-Euler linear solve.
NEURON {
    POINT_PROCESS CplSyn
    RANGE tau1, tau2, e, i
    NONSPECIFIC_CURRENT i
}
PARAMETER {
    tau1 = 1 (ms)
    tau2 = 5 (ms)
    e = 0 (mV)
}
ASSIGNED { v (mV) i (nA) }
STATE { a b }
INITIAL { a = 0  b = 0 }
BREAKPOINT {
    SOLVE s METHOD derivimplicit
    i = b*(v - e)
}
DERIVATIVE s {
    b' = (a - b)/tau2
    a' = -a/tau1
}
NET_RECEIVE(w (uS)) { a = a + w }

: Exponential synapse: cablesim's built-in expsyn (NEURON's ExpSyn). g decays with tau; an
: event adds its weight to g; i = g·(v − e). A point process: g [µS], i [nA].

NEURON {
    POINT_PROCESS expsyn
    RANGE tau, e
    NONSPECIFIC_CURRENT i
}

UNITS {
    (nA) = (nanoamp)
    (mV) = (millivolt)
    (uS) = (microsiemens)
}

PARAMETER {
    tau = 2 (ms) <1e-9, 1e300>
    e = 0 (mV)
}

ASSIGNED {
    v (mV)
    i (nA)
}

STATE { g (uS) }

INITIAL { g = 0 }

BREAKPOINT {
    SOLVE state METHOD cnexp
    i = g*(v - e)
}

DERIVATIVE state { g' = -g/tau }

NET_RECEIVE(weight (uS)) { g = g + weight }

: An exponential synapse whose events facilitate per connection: each connection's weight
: vector keeps (w, tlast, n); an event adds w*(1 + f*exp(-(t - tlast)/tauf)) [uS] to g, which
: decays with tau; i = g*(v - e). NET_RECEIVE's INITIAL sets tlast and n per connection.
: Written for tests/test_artificial_neuron.py (this project's): several weights and an INITIAL
: block in a POINT_PROCESS's NET_RECEIVE, t there being the event's time.

NEURON {
    POINT_PROCESS FacExpSyn
    RANGE tau, e, tauf, f, i
    NONSPECIFIC_CURRENT i
}

UNITS {
    (nA) = (nanoamp)
    (mV) = (millivolt)
    (uS) = (microsiemens)
}

PARAMETER {
    tau = 3 (ms) <1e-9, 1e9>
    e = 0 (mV)
    tauf = 25 (ms)
    f = 1
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

NET_RECEIVE (w (uS), tlast (ms), n) {
    INITIAL {
        tlast = -1e9
        n = 0
    }
    g = g + w*(1 + f*exp(-(t - tlast)/tauf))
    tlast = t
    n = n + 1
}

: A leaky integrate-and-fire artificial cell whose inputs facilitate per connection: each
: connection's weight vector keeps (w, tlast, count); an event adds w*(1 + f*exp(-(t-tlast)/tauf))
: to m, which decays with tau and fires at 1. NET_RECEIVE's INITIAL sets tlast and count per
: connection. Written for tests/test_artificial_neuron.py (this project's): several weights and
: an INITIAL block in NET_RECEIVE.

NEURON {
    ARTIFICIAL_CELL ArtFacil
    RANGE tau, tauf, f, m
}

PARAMETER {
    tau = 8 (ms)
    tauf = 20 (ms)
    f = 1.5
}

ASSIGNED {
    m
    t0 (ms)
}

INITIAL {
    m = 0
    t0 = t
}

NET_RECEIVE (w, tlast (ms), count) {
    INITIAL {
        tlast = -1e9
        count = 0
    }
    m = m*exp(-(t - t0)/tau)
    t0 = t
    m = m + w*(1 + f*exp(-(t - tlast)/tauf))
    tlast = t
    count = count + 1
    if (m > 1) {
        net_event(t)
        m = 0
    }
}

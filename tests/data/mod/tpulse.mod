: A density mechanism that reads t: a conductance gmax towards e, on from ton to toff (ms).
: Written for tests/test_artificial_neuron.py and (a copy in tests/data/mod) the model
: tpulse_two_synapses of tests/test_nmodl_neuron.py and tests/test_nmodl_gpu.py (this project's):
: `t` in BREAKPOINT.

NEURON {
    SUFFIX tpulse
    NONSPECIFIC_CURRENT i
    RANGE gmax, e, ton, toff
}

PARAMETER {
    gmax = 0.002 (S/cm2)
    e = 20 (mV)
    ton = 10 (ms)
    toff = 30 (ms)
}

ASSIGNED {
    v (mV)
    i (mA/cm2)
}

BREAKPOINT {
    if (t >= ton && t < toff) {
        i = gmax*(v - e)
    } else {
        i = 0
    }
}

: Written for cablesim's tests (not from a published model): reads the CV's sodium current
: density, summed over the mechanisms that write it, into a state that gates a leak. Checks
: that ion currents are accumulated per CV and read back as NEURON does.

NEURON {
    SUFFIX naacc
    USEION na READ ina
    NONSPECIFIC_CURRENT i
    RANGE gacc, e, tau
}

UNITS {
    (mA) = (milliamp)
    (mV) = (millivolt)
    (S) = (siemens)
}

PARAMETER {
    gacc = 0.002 (S/cm2)
    e = -80 (mV)
    tau = 20 (ms)
}

ASSIGNED {
    v (mV)
    ina (mA/cm2)
    i (mA/cm2)
}

STATE { acc }

BREAKPOINT {
    SOLVE states METHOD cnexp
    i = gacc*acc*(v - e)
}

DERIVATIVE states {
    acc' = (-ina - acc)/tau
}

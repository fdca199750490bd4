: Passive leak: cablesim's built-in pas (NEURON's passive), i = g·(v − e). A linear current
: with constant conductance: the compiler gives it a fold (cs_mech.h), so it is folded into the
: cable matrix once at set-up.

NEURON {
    SUFFIX pas
    NONSPECIFIC_CURRENT i
    RANGE g, e
}

UNITS {
    (mA) = (milliamp)
    (mV) = (millivolt)
    (S) = (siemens)
}

PARAMETER {
    g = 0.001 (S/cm2) <0, 1e300>
    e = -70 (mV)
}

ASSIGNED {
    v (mV)
    i (mA/cm2)
}

BREAKPOINT {
    i = g*(v - e)
}

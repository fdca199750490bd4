: Hodgkin-Huxley squid axon channels: cablesim's built-in hh, compiled by nmodl/ at build time.
: NEURON's hh.mod (the standard) with the numerics of ../shared/DESIGN.md: rates computed
: directly (no TABLE), vtrap continued by its Taylor expansion for |x/y| < 1e-6, gates by cnexp.
: Unlike NEURON's, ena and ek are parameters of the mechanism (the built-in's interface), not
: read from the ions. Each expression is written as mechanisms/cs_mech_math.h writes it (the
: CUDA backend's hand-written kernels), so both backends compute the same numbers.

NEURON {
    SUFFIX hh
    NONSPECIFIC_CURRENT i
    RANGE gnabar, gkbar, gl, el, ena, ek
}

UNITS {
    (mA) = (milliamp)
    (mV) = (millivolt)
    (S) = (siemens)
}

PARAMETER {
    gnabar = 0.12 (S/cm2) <0, 1e300>
    gkbar = 0.036 (S/cm2) <0, 1e300>
    gl = 0.0003 (S/cm2) <0, 1e300>
    el = -54.3 (mV)
    ena = 50 (mV)
    ek = -77 (mV)
}

STATE { m (1) h (1) n (1) }

ASSIGNED {
    v (mV)
    celsius (degC)
    i (mA/cm2)
}

BREAKPOINT {
    LOCAL gna, gk, n2
    SOLVE states METHOD cnexp
    n2 = n*n
    gna = gnabar*m*m*m*h
    gk = gkbar*n2*n2
    i = gna*(v - ena) + gk*(v - ek) + gl*(v - el)
}

INITIAL {
    LOCAL a, b
    a = alpha_m(v)
    b = beta_m(v)
    m = a/(a + b)
    a = alpha_h(v)
    b = beta_h(v)
    h = a/(a + b)
    a = alpha_n(v)
    b = beta_n(v)
    n = a/(a + b)
}

DERIVATIVE states {
    LOCAL q10, a, b, minf, mtau, hinf, htau, ninf, ntau
    q10 = 3^((celsius - 6.3)/10)
    a = alpha_m(v)
    b = beta_m(v)
    mtau = 1/(q10*(a + b))
    minf = a/(a + b)
    a = alpha_h(v)
    b = beta_h(v)
    htau = 1/(q10*(a + b))
    hinf = a/(a + b)
    a = alpha_n(v)
    b = beta_n(v)
    ntau = 1/(q10*(a + b))
    ninf = a/(a + b)
    m' = (minf - m)/mtau
    h' = (hinf - h)/htau
    n' = (ninf - n)/ntau
}

FUNCTION alpha_m(v (mV)) { alpha_m = 0.1*vtrap(-(v + 40), 10) }
FUNCTION beta_m(v (mV)) { beta_m = 4*exp(-(v + 65)/18) }
FUNCTION alpha_h(v (mV)) { alpha_h = 0.07*exp(-(v + 65)/20) }
FUNCTION beta_h(v (mV)) { beta_h = 1/(exp(-(v + 35)/10) + 1) }
FUNCTION alpha_n(v (mV)) { alpha_n = 0.01*vtrap(-(v + 55), 10) }
FUNCTION beta_n(v (mV)) { beta_n = 0.125*exp(-(v + 65)/80) }

: x/(exp(x/y) - 1), continued by its Taylor expansion near x = 0
FUNCTION vtrap(x, y) {
    LOCAL r
    r = x/y
    if (fabs(r) < 1e-6) {
        vtrap = y*(1 - r/2)
    } else {
        vtrap = x/(exp(r) - 1)
    }
}

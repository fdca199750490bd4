: Current clamp: cablesim's built-in iclamp (NEURON's IClamp with the names delay, duration,
: amplitude). Injects amplitude [nA] while delay <= t < delay + duration, t being the step's
: midpoint as in NEURON's fixed step. An electrode current: inward positive.

NEURON {
    POINT_PROCESS iclamp
    RANGE delay, duration, amplitude
    ELECTRODE_CURRENT i
}

UNITS { (nA) = (nanoamp) }

PARAMETER {
    delay = 0 (ms) <0, 1e300>
    duration = 0 (ms) <0, 1e300>
    amplitude = 0 (nA)
}

ASSIGNED { i (nA) }

BREAKPOINT {
    if (t >= delay && t < delay + duration) {
        i = amplitude
    } else {
        i = 0
    }
}

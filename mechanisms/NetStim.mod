: NEURON's NetStim (src/nrnoc/netstim.mod, see PROVENANCE.md): a spike generator that fires
: `number` spikes every `interval` ms from `start`, and can be switched on (weight > 0) or off
: (weight < 0) by events. Written here from NEURON's file without its random stream: noise
: (a negative exponential share of each interval, from NEURON's Random123 stream, which the
: NMODL subset does not reproduce) is fixed at 0 by its range, so a noisy NetStim is refused
: with one line naming the model rather than run with other random numbers.

NEURON	{
    ARTIFICIAL_CELL NetStim
    RANGE interval, number, start
    RANGE noise
}

PARAMETER {
    interval    = 10 (ms) <1e-9,1e9>    : time between spikes (msec)
    number      = 10 <0,1e9>            : number of spikes (independent of noise)
    start       = 50 (ms)               : start of first spike
    noise       = 0 <0,0>               : amount of randomness: 0 only (see above)
}

ASSIGNED {
    event (ms)
    on
    ispike
}

INITIAL {
    on = 0 : off
    ispike = 0
    if (start >= 0 && number > 0) {
        on = 1
        : the first spike at start (noise 0)
        event = start + invl(interval) - interval*(1. - noise)
        : but not earlier than 0
        if (event < 0) {
            event = 0
        }
        net_send(event, 3)
    }
}

PROCEDURE init_sequence(t(ms)) {
    if (number > 0) {
        on = 1
        event = 0
        ispike = 0
    }
}

FUNCTION invl(mean (ms)) (ms) {
    if (mean <= 0.) {
        mean = .01 (ms) : I would worry if it were 0.
    }
    invl = mean
}

PROCEDURE next_invl() {
    if (number > 0) {
        event = invl(interval)
    }
    if (ispike >= number) {
        on = 0
    }
}

NET_RECEIVE (w) {
    if (flag == 0) { : external event
        if (w > 0 && on == 0) { : turn on spike sequence
            : but not if a netsend is on the queue
            init_sequence(t)
            next_invl()
            event = event - interval*(1. - noise)
            net_send(event, 1)
        }else if (w < 0) { : turn off spiking definitively
            on = 0
        }
    }
    if (flag == 3) { : from INITIAL
        if (on == 1) { : but ignore if turned off by external event
            init_sequence(t)
            net_send(0, 1)
        }
    }
    if (flag == 1 && on == 1) {
        ispike = ispike + 1
        net_event(t)
        next_invl()
        if (on == 1) {
            net_send(event, 1)
        }
    }
}

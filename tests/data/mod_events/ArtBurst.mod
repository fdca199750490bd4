: An artificial cell that answers each input event with a burst: `nspike` spikes `gap` ms
: apart, the first `lag` ms after the event, through self-events (net_send with flags 1 and 2)
: and net_event. Events that arrive during a burst are counted and ignored. Written for
: tests/test_artificial_neuron.py (this project's): net_send, net_event, flag.

NEURON {
    ARTIFICIAL_CELL ArtBurst
    RANGE nspike, gap, lag, left, ignored
}

PARAMETER {
    nspike = 3
    gap = 2 (ms)
    lag = 0.5 (ms)
}

ASSIGNED {
    left
    ignored
}

INITIAL {
    left = 0
    ignored = 0
}

NET_RECEIVE (w) {
    if (flag == 0) {
        if (left == 0 && w > 0) {
            left = nspike
            net_send(lag, 1)
        } else {
            ignored = ignored + 1
        }
    } else if (flag == 1) {
        net_event(t)
        left = left - 1
        if (left > 0) {
            net_send(gap, 1)
        } else {
            net_send(0, 2)
        }
    } else if (flag == 2) {
        left = 0
    }
}

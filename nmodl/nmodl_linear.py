"""Whether a synapse type is linear: instances of it at one CV with equal parameters may be
merged into one (Arbor's coalesced synapses). k such instances with states X1..Xk then act as one
with state X1 + ... + Xk, exactly in real arithmetic, when

  - the state update is linear and homogeneous in the states: X' = B(v, params)·X, no source;
  - every current (and so its conductance dI/dv) is linear and homogeneous in the states;
  - NET_RECEIVE(weight) only adds to states increments free of the states: X ← X + a(weight);
  - INITIAL starts every state at 0;
  - nothing else per instance changes with the states or the events (no procedure calls, no
    branch on a state, no weight vector, no NET_RECEIVE INITIAL block, no self-events).

Variables computed from states (Exp2Syn's g = B − A) count as states: every write to one must
be homogeneous in them. The check is conservative: a type it cannot prove linear stays apart.
"""

from nmodl_solve import NonLinear, has_name, is_zero, linear, ONE


def names_in(e):
    k = e[0]
    if k == "name":
        return {e[1]}
    if k == "num" or k == "raw":
        return set()
    if k == "call":
        out = set()
        for a in e[2]:
            out |= names_in(a)
        return out
    if k == "un":
        return names_in(e[2])
    return names_in(e[2]) | names_in(e[3])


def calls_in(e):
    k = e[0]
    if k == "call":
        out = {e[1]}
        for a in e[2]:
            out |= calls_in(a)
        return out
    if k in ("name", "num", "raw"):
        return set()
    if k == "un":
        return calls_in(e[2])
    return calls_in(e[2]) | calls_in(e[3])


def homogeneous(e, lin):
    """e = Σ b_y·y over y in lin, every b_y free of lin: no constant term."""
    rest = e
    for y in sorted(lin):
        try:
            b, rest = linear(rest, y)
        except NonLinear:
            return False
        if any(has_name(b, z) for z in lin):
            return False
    return is_zero(rest)


def walk(stmts):
    for s in stmts:
        yield s
        if s[0] == "if":
            yield from walk(s[2])
            yield from walk(s[3])
        elif s[0] == "while":
            yield from walk(s[2])


def state_like(m, blocks, states):
    """The states and every variable written from an expression that reads one (a fixpoint)."""
    lin = set(states)
    grew = True
    while grew:
        grew = False
        for body in blocks:
            for s in walk(body):
                if s[0] == "assign" and s[1] not in lin and names_in(s[2]) & lin:
                    lin.add(s[1])
                    grew = True
    return lin


def is_linear(m):
    """True when the synapse type m (a parsed module) may be coalesced; see the module's text."""
    if not m.point or m.artificial or not m.net_receive or m.net_receive_init is not None:
        return False
    args, recv, _ = m.net_receive
    if len(args) != 1 or m.kinetics or m.linears or m.breakpoint is None:
        return False
    states = [v.name for v in m.states]
    if not states or any(v.value is not None and float(v.value) != 0.0 for v in m.states if hasattr(v, "value")):
        return False
    derivs = [body for body in m.derivatives.values()]
    blocks = [m.breakpoint, recv, m.initial or []] + derivs
    lin = state_like(m, blocks, states)
    # functions and procedures may read a state behind the caller's back: none may name one
    for _, body, _ in list(m.functions.values()) + list(m.procedures.values()):
        for s in walk(body):
            if any(n in lin for n in stmt_names(s)):
                return False
    user = set(m.functions) | set(m.procedures)

    def plain(body, in_receive=False):
        """Every statement of body keeps the instances' sum: see the module's text."""
        for s in walk(body):
            k = s[0]
            if k in ("callst", "while", "steadystate", "solvelinear"):
                return False
            if any(calls_in(e) & user for e in stmt_exprs(s)):
                return False
            if k == "if" and names_in(s[1]) & lin:
                return False
            if k == "solve" and s[2] not in ("cnexp", "derivimplicit"):
                return False
            if k == "deriv" and not homogeneous(s[2], lin):
                return False
            if k == "assign":
                x, e = s[1], s[2]
                if x == "v":
                    return False
                if in_receive:
                    if x not in lin:
                        if names_in(e) & lin or not is_local(body, x):
                            return False
                        continue
                    try:
                        b, a = linear(e, x)
                    except NonLinear:
                        return False
                    if b != ONE or names_in(a) & lin:
                        return False
                elif x in lin and not homogeneous(e, lin):
                    return False
        return True

    if not all(plain(b) for b in [m.breakpoint, m.initial or []] + derivs) or not plain(recv, True):
        return False
    currents = list(m.nonspecific) + list(m.electrode)
    for ion, d in m.ions.items():
        currents += [n for n in d["write"] if not n.startswith("e") and n not in (ion + "i", ion + "o")]
    return bool(currents) and all(c in lin for c in currents)


def is_local(body, x):
    return any(s[0] == "local" and x in s[1] for s in walk(body))


def stmt_exprs(s):
    k = s[0]
    if k in ("assign", "deriv"):
        return [s[2]]
    if k in ("if", "while"):
        return [s[1]]
    if k == "callst":
        return list(s[2])
    return []


def stmt_names(s):
    out = set()
    for e in stmt_exprs(s):
        out |= names_in(e)
    if s[0] in ("assign", "deriv"):
        out.add(s[1])
    return out

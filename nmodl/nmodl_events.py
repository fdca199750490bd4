"""Events: ARTIFICIAL_CELL, NET_RECEIVE with a weight vector, a flag and an INITIAL block, and
net_send / net_event / net_move (NEURON's semantics; nmodl/README.md).

Kept apart from the parser and the code generator, which call in here:
  parse_artificial / parse_net_receive   from nmodl_parser (the NEURON block, NET_RECEIVE)
  event_call                             from Gen.call (net_send, net_event, net_move)
  receive_code / type_fields             from Gen.body_header / Gen.c_file
An artificial cell runs on the host, in the simulation core (src/cs_artcell.c): it has no CV,
no v and no current, and no GPU code. Its NET_RECEIVE sees `t` as the event's exact time.
"""

from nmodl_lexer import NmodlError

EVENT_CALLS = ("net_send", "net_event", "net_move")
BUILTIN_ARTIFICIAL = ("NetStim", "VecStim", "IntFire1", "IntFire2", "IntFire4")


def parse_artificial(p, m, tok):
    """ARTIFICIAL_CELL NAME in the NEURON block: a point process without a location."""
    m.suffix = p.name().text
    m.point = True
    m.artificial = True
    m.suffix_line = tok.line


def parse_net_receive(p, m, tok):
    """NET_RECEIVE(w1 (unit), w2, ...) { INITIAL { ... } statements }."""
    args = p.arglist()
    p.expect("{")
    init = None
    if p.at("INITIAL"):
        p.next()
        init = p.block()
    body = []
    while not p.at("}"):
        if p.peek().kind == "eof":
            p.error(p.peek(), "unterminated block")
        st = p.statement(False, False)
        if st is not None:
            body.append(st)
    p.expect("}")
    m.net_receive = (args, body, tok.line)
    m.net_receive_init = init


def verbatim_hint(mod):
    """What to say beside 'VERBATIM is not supported' in a file that defines a built-in."""
    if is_artificial(mod) and mod.suffix in BUILTIN_ARTIFICIAL:
        return " (%s is built into cablesim: use it by name, without this file)" % mod.suffix
    return ""


def builtin_defined_by(path):
    """The built-in artificial cell a .mod file defines (its ARTIFICIAL_CELL name), or None: such a
    file is NEURON's own copy (bmtk's vecevent.mod is NEURON's VecStim), which cablesim has built in."""
    import re
    try:
        with open(path, errors="replace") as f:
            m = re.search(r"^\s*ARTIFICIAL_CELL\s+(\w+)", f.read(), re.M)
    except OSError:
        return None
    return m.group(1) if m and m.group(1) in BUILTIN_ARTIFICIAL else None


def is_artificial(mod):
    return getattr(mod, "artificial", False)


def event_call(gen, f, a, line):
    """C for net_send(delay, flag), net_event(t), net_move(t): through the view's core services,
    in an artificial cell's INITIAL or NET_RECEIVE."""
    if not is_artificial(gen.m):
        gen.err(line, "'%s' outside an ARTIFICIAL_CELL is not supported" % f)
    if not gen.in_events:
        gen.err(line, "'%s' outside INITIAL and NET_RECEIVE is not supported" % f)
    want = {"net_send": 2, "net_event": 1, "net_move": 1}[f]
    if len(a) != want:
        gen.err(line, "%s takes %d argument%s, given %d" % (f, want, "s" if want > 1 else "", len(a)))
    if f == "net_send":
        return "_c->m->net->send(_c->m->net, _c->k, _c->m->t + (%s), %s)" % (a[0], a[1])
    if f == "net_event":
        return "_c->m->net->event(_c->m->net, _c->k, %s)" % a[0]
    return "_c->m->net->move(_c->m->net, _c->k, %s)" % a[0]


def takes_vector(mod):
    """A POINT_PROCESS whose events carry their connection's weight vector (several NET_RECEIVE
    arguments or its INITIAL block): CPU only (the core keeps the vectors, src/core/cs_sim.c)."""
    return bool(mod.net_receive) and not is_artificial(mod) and (
        len(mod.net_receive[0]) > 1 or getattr(mod, "net_receive_init", None) is not None)


def host_only(mod):
    """No GPU code: artificial cells (run by the core) and weight-vector synapses."""
    return is_artificial(mod) or takes_vector(mod)


def nweight(mod):
    return len(mod.net_receive[0]) if mod.net_receive else 0


def receive_code(gen):
    """The vector form of NET_RECEIVE (weights w[0..n), flag) and its INITIAL block."""
    m = gen.m
    if not m.net_receive:
        return []
    args, body, line = m.net_receive
    init = getattr(m, "net_receive_init", None)
    scope = {a: "_w[%d]" % j for j, a in enumerate(args)}
    ctx = "_ctx _cc = {_m, _k, 0, 0.0, NULL, _m->state, _m->param, _k}, *_c = &_cc;" if is_artificial(m) else \
        "_ctx _cc = {_m, _k, _m->node[_k], _m->v[_m->node[_k]], NULL, _m->state, _m->param, _k}, *_c = &_cc;"
    L = []
    gen.in_events = True
    try:
        L.append("static void _receive_vec(const cs_mech_view *_m, int _k, double *_w, double _flag) {")
        L.append("    " + ctx)
        L += gen.stmts(body, dict(scope, flag="_flag"), 1)
        L += ["    (void)_c; (void)_w; (void)_flag;", "}"]
        if init is not None:
            L.append("static void _net_init(const cs_mech_view *_m, int _k, double *_w) {")
            L.append("    " + ctx)
            L += gen.stmts(init, scope, 1)
            L += ["    (void)_c; (void)_w;", "}"]
    finally:
        gen.in_events = False
    return L


def type_fields(gen):
    """Designated initialisers of cs_mech_type's event fields."""
    m = gen.m
    return ", .artificial = %d, .nweight = %d, .net_receive_vec = %s, .net_init = %s" % (
        1 if is_artificial(m) else 0, nweight(m), "_receive_vec" if m.net_receive else "NULL",
        "_net_init" if getattr(m, "net_receive_init", None) is not None else "NULL")


def check(gen):
    """What an artificial cell must not have: a location's v or ions, a current."""
    m = gen.m
    if not is_artificial(m):
        return
    if m.ions or m.nonspecific or m.electrode:
        raise NmodlError(m.path, m.suffix_line, "an ARTIFICIAL_CELL with ions or currents is not supported")
    if m.breakpoint is not None:
        raise NmodlError(m.path, m.suffix_line, "an ARTIFICIAL_CELL with a BREAKPOINT block is not supported")
    if not m.net_receive:
        raise NmodlError(m.path, m.suffix_line, "an ARTIFICIAL_CELL without NET_RECEIVE")

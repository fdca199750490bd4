"""Solving DERIVATIVE equations that are linear in their own state (cnexp, derivimplicit).

x' = f(x) with f linear in x: f = a + b·x, a and b found symbolically on the AST.
  cnexp:         x ← x + (1 − exp(b·dt))·(−a/b − x)   (NEURON's form; exact for fixed v)
                 x ← x + dt·a                        when b = 0
  derivimplicit: x ← (x + dt·a) / (1 − dt·b)         (backward Euler; NEURON's Newton
                 converges to this in one step for a linear equation)
cnexp solves the equations one after another, each linear in its own state with the others
held at their current values (a later one sees the earlier ones' new values), as nocmodl's
cnexp does whether or not the equations are coupled. derivimplicit: equations that read a
state updated later in the block form a coupled system, solved simultaneously as NEURON's
Newton iteration solves it (one step is exact for a linear system): x' = a + B·x for the
block's states, (1 − dt·B)·x_new = x + dt·a ("linsys", solved by cs_nmodl_solve).
"""

from nmodl_lexer import NmodlError

ZERO = ("num", "0")
ONE = ("num", "1")


class NonLinear(Exception):
    pass


def has_name(e, x):
    k = e[0]
    if k == "name":
        return e[1] == x
    if k == "num":
        return False
    if k == "call":
        return any(has_name(a, x) for a in e[2])
    if k == "un":
        return has_name(e[2], x)
    return has_name(e[2], x) or has_name(e[3], x)


def is_zero(e):
    return e[0] == "num" and float(e[1]) == 0.0


def add(a, b, op="+"):
    if is_zero(b):
        return a
    if is_zero(a):
        return b if op == "+" else ("un", "-", b)
    return ("bin", op, a, b)


def mul(a, b):
    if is_zero(a) or is_zero(b):
        return ZERO
    if a == ONE:
        return b
    if b == ONE:
        return a
    return ("bin", "*", a, b)


def linear(e, x):
    """(b, a) with e = b·x + a; NonLinear if e is not linear in x."""
    if not has_name(e, x):
        return ZERO, e
    k = e[0]
    if k == "name":
        return ONE, ZERO
    if k == "un" and e[1] == "-":
        b, a = linear(e[2], x)
        return (ZERO if is_zero(b) else ("un", "-", b)), (ZERO if is_zero(a) else ("un", "-", a))
    if k == "bin" and e[1] in "+-":
        b1, a1 = linear(e[2], x)
        b2, a2 = linear(e[3], x)
        return add(b1, b2, e[1]), add(a1, a2, e[1])
    if k == "bin" and e[1] == "*":
        if not has_name(e[2], x):
            b, a = linear(e[3], x)
            return mul(e[2], b), mul(e[2], a)
        if not has_name(e[3], x):
            b, a = linear(e[2], x)
            return mul(b, e[3]), mul(a, e[3])
    if k == "bin" and e[1] == "/" and not has_name(e[3], x):
        b, a = linear(e[2], x)
        return (ZERO if is_zero(b) else ("bin", "/", b, e[3])), (ZERO if is_zero(a) else ("bin", "/", a, e[3]))
    raise NonLinear()


def cnexp_special(f, x, X, dt, line):
    """The two common forms, written as the built-in mechanisms write them (fewer roundings):
    x' = (A − x)/B  →  x + (1 − exp(−dt/B))·(A − x);   x' = −x/B  →  x·exp(−dt/B)."""
    if f[0] == "bin" and f[1] == "/" and not has_name(f[3], x):
        num, B = f[2], f[3]
        decay = ("call", "exp", [("bin", "/", ("un", "-", dt), B)], line)
        def is_x(e):
            return e[0] == "name" and e[1] == x
        if num[0] == "bin" and num[1] == "-" and is_x(num[3]) and not has_name(num[2], x):
            return ("bin", "+", X, ("bin", "*", ("bin", "-", ONE, decay), ("bin", "-", num[2], X)))
        if num[0] == "un" and num[1] == "-" and is_x(num[2]):
            return ("bin", "*", X, decay)
    return None


def solve_block(path, body, states, method):
    """The DERIVATIVE body with each x' = f replaced by its update (an "assign" statement)."""
    order = []

    def collect(stmts):
        for s in stmts:
            if s[0] == "deriv":
                order.append(s[1])
            elif s[0] == "if":
                collect(s[2])
                collect(s[3])

    collect(body)
    pos = {x: i for i, x in enumerate(order)}
    if method == "derivimplicit":
        for s in body:
            if s[0] == "deriv":
                _, x, f, line = s
                if any(pos[y] > pos.get(x, -1) and has_name(f, y) for y in order):
                    return coupled_system(path, body, order, line)

    def rewrite(stmts):
        out = []
        for s in stmts:
            if s[0] == "if":
                out.append(("if", s[1], rewrite(s[2]), rewrite(s[3]), s[4]))
                continue
            if s[0] != "deriv":
                out.append(s)
                continue
            _, x, f, line = s
            if x not in states:
                raise NmodlError(path, line, "'%s' is not a STATE" % x)
            try:
                b, a = linear(f, x)
            except NonLinear:
                raise NmodlError(path, line, "METHOD %s on an equation not linear in %s is not supported" % (method, x))
            X = ("name", x, line)
            dt = ("name", "dt", line)
            special = cnexp_special(f, x, X, dt, line) if method == "cnexp" else None
            if special is not None:
                out.append(("assign", x, special, line))
                continue
            if method == "cnexp":
                if is_zero(b):
                    new = ("bin", "+", X, ("bin", "*", dt, a))
                else:
                    decay = ("bin", "-", ONE, ("call", "exp", [("bin", "*", dt, b)], line))
                    target = ("bin", "-", ("un", "-", ("bin", "/", a, b)), X)
                    new = ("bin", "+", X, ("bin", "*", decay, target))
            else:
                new = ("bin", "/", ("bin", "+", X, ("bin", "*", dt, a)), ("bin", "-", ONE, ("bin", "*", dt, b)))
            out.append(("assign", x, new, line))
        return out

    return rewrite(body)


def coupled_system(path, body, order, line):
    """A coupled linear DERIVATIVE block for derivimplicit: its statements before the first
    equation, then ("linsys", states, B, a, line) with x' = a + B·x (B[i][j], a[i] free of the
    states)."""
    pre, eqs = [], []
    for s in body:
        if s[0] == "deriv":
            eqs.append(s)
        elif eqs:
            raise NmodlError(path, s[-1], "a statement between the equations of a coupled system is not supported")
        elif s[0] == "if" and any(has_deriv(x) for x in (s[2], s[3])):
            raise NmodlError(path, s[4], "an equation inside an if in a coupled system is not supported")
        else:
            pre.append(s)
    B, A = [], []
    for _, x, f, ln in eqs:
        row, rest = [], f
        for y in order:
            try:
                b, rest = linear(rest, y)
            except NonLinear:
                raise NmodlError(path, ln, "METHOD derivimplicit on a system not linear in %s is not supported" % y)
            if any(has_name(b, z) for z in order):
                raise NmodlError(path, ln, "METHOD derivimplicit on a system not linear in its states is not supported")
            row.append(b)
        B.append(row)
        A.append(rest)
    return pre + [("linsys", [e[1] for e in eqs], B, A, line)]


def has_deriv(stmts):
    return any(s[0] == "deriv" or (s[0] == "if" and (has_deriv(s[2]) or has_deriv(s[3]))) for s in stmts)

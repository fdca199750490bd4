"""NMODL parser for the subset cablesim compiles (nmodl/README.md lists it).

Produces a Mod: the NEURON block's declarations, the variable blocks, and the code blocks as
small ASTs. Expressions: ("num", text) ("name", id, line) ("call", id, [args], line)
("bin", op, a, b) ("un", op, a). Statements: ("assign", id, expr, line) ("deriv", id, expr, line)
("if", cond, [then], [else], line) ("callst", id, [args], line) ("local", [ids], line)
("solve", block, method, line). Anything outside the subset raises NmodlError(FILE:LINE).
"""

import nmodl_events
from nmodl_lexer import NmodlError, tokenize

IONS = ("na", "k", "ca")
VALENCE = {"na": 1.0, "k": 1.0, "ca": 2.0}
# physical constants of a UNITS block: NAME = (faraday) (coulomb) etc. (NEURON's 2019 values)
UNIT_CONSTANTS = {"faraday": 96485.3321233100184, "k-mole": 8.31446261815324, "r": 8.31446261815324,
                  "e": 1.602176634e-19, "pi": 3.14159265358979323846}
SKIP_BLOCKS = {"UNITS", "INDEPENDENT"}
UNSUPPORTED_BLOCKS = {"NONLINEAR", "DISCRETE", "PARTIAL", "FUNCTION_TABLE",
                      "BEFORE", "AFTER", "CONSTRUCTOR", "DESTRUCTOR", "NET_RECEIVE_INIT", "WATCH",
                      "LAG", "MATCH", "TERMINAL", "SENS", "CONSERVE", "COMPARTMENT", "LONGITUDINAL_DIFFUSION",
                      "DEFINE", "INCLUDE", "ARTIFICIAL_CELL", "FOR_NETCONS", "FROM", "WHILE", "FUNCTION_TABLE"}


class Var:
    def __init__(self, name, line, unit="", value=None, lo=None, hi=None):
        self.name, self.line, self.unit, self.value, self.lo, self.hi = name, line, unit, value, lo, hi


class Mod:
    def __init__(self, path):
        self.path = path
        self.suffix = None
        self.point = False
        self.suffix_line = 0
        self.ions = {}           # ion -> {"read": set, "write": set, "line": n}
        self.nonspecific = []    # current names
        self.electrode = []      # ELECTRODE_CURRENT names (inward positive)
        self.range = set()
        self.globals = set()
        self.params = []         # [Var]
        self.constants = {}      # name -> value text
        self.assigned = []       # [Var]
        self.states = []         # [Var]
        self.initial = None      # [stmt]
        self.breakpoint = None
        self.derivatives = {}    # name -> [stmt]
        self.kinetics = {}       # name -> [stmt] (with "reaction", "flux", "conserve")
        self.linears = {}        # name -> [stmt] (with "lineq": ~ lhs = rhs)
        self.procedures = {}     # name -> ([args], [stmt], line)
        self.functions = {}      # name -> ([args], [stmt], line)
        self.net_receive = None  # ([args], [stmt], line)
        self.net_receive_init = None  # NET_RECEIVE's INITIAL block: [stmt] (nmodl_events)
        self.artificial = False  # ARTIFICIAL_CELL (nmodl_events)


class Parser:
    def __init__(self, text, path):
        self.path = path
        self.toks = tokenize(text, path)
        self.p = 0
        self.in_linear = False   # parsing a LINEAR block: ~ lhs = rhs

    # -- token helpers
    def peek(self, off=0):
        return self.toks[min(self.p + off, len(self.toks) - 1)]

    def next(self):
        t = self.toks[self.p]
        if t.kind != "eof":
            self.p += 1
        return t

    def error(self, tok, msg):
        raise NmodlError(self.path, tok.line, msg)

    def at(self, text):
        t = self.peek()
        return t.kind != "eof" and t.text == text

    def expect(self, text):
        t = self.next()
        if t.text != text:
            self.error(t, "expected '%s', found '%s'" % (text, t.text or "end of file"))
        return t

    def name(self):
        t = self.next()
        if t.kind != "name":
            self.error(t, "expected a name, found '%s'" % (t.text or "end of file"))
        return t

    def unsupported(self, tok, what):
        self.error(tok, "%s is not supported" % what)

    # -- file
    def parse(self):
        m = Mod(self.path)
        while self.peek().kind != "eof":
            t = self.next()
            w = t.text
            if w == "NEURON":
                self.neuron_block(m)
            elif w in SKIP_BLOCKS:
                self.units_block(m) if w == "UNITS" else self.skip_block()
            elif w == "PARAMETER":
                self.decl_block(m.params, values=True)
            elif w == "CONSTANT":
                tmp = []
                self.decl_block(tmp, values=True)
                for v in tmp:
                    m.constants[v.name] = v.value
            elif w == "ASSIGNED":
                self.decl_block(m.assigned, values=False)
            elif w == "STATE":
                self.decl_block(m.states, values=False)
            elif w == "INITIAL":
                m.initial = self.block(initial=True)
            elif w == "BREAKPOINT":
                m.breakpoint = self.block(allow_solve=True)
            elif w == "DERIVATIVE":
                n = self.name()
                m.derivatives[n.text] = self.block(deriv=True)
            elif w == "KINETIC":
                n = self.name()
                m.kinetics[n.text] = self.block(kinetic=True)
            elif w == "LINEAR":
                n = self.name()
                self.in_linear = True
                m.linears[n.text] = self.block()
                self.in_linear = False
            elif w in ("PROCEDURE", "FUNCTION"):
                n = self.name()
                args = self.arglist()
                if w == "FUNCTION" and self.at("("):
                    self.unit()
                body = self.block()
                (m.procedures if w == "PROCEDURE" else m.functions)[n.text] = (args, body, n.line)
            elif w == "NET_RECEIVE":
                nmodl_events.parse_net_receive(self, m, t)
            elif w in ("UNITSON", "UNITSOFF", "THREADSAFE"):
                pass
            elif w == "LOCAL":  # a file-level LOCAL: kept per instance, like an ASSIGNED
                for n in self.name_list():
                    if self.at("["):
                        self.unsupported(self.peek(), "an array variable")
                    m.assigned.append(Var(n.text, n.line))
            elif w == "VERBATIM":
                self.error(t, "VERBATIM is not supported" + nmodl_events.verbatim_hint(m))
            elif w in UNSUPPORTED_BLOCKS:
                self.unsupported(t, "%s block" % w)
            else:
                self.error(t, "unexpected '%s' at the top level" % w)
        return m

    def skip_block(self):
        self.expect("{")
        depth = 1
        while depth:
            t = self.next()
            if t.kind == "eof":
                self.error(t, "unterminated block")
            depth += (t.text == "{") - (t.text == "}")

    def units_block(self, m):
        self.expect("{")
        while not self.at("}"):
            t = self.peek()
            if t.kind == "eof":
                self.error(t, "unterminated UNITS block")
            if t.text == "(":
                self.unit()
                self.expect("=")
                self.unit()
            else:
                n = self.name()
                self.expect("=")
                if not self.at("("):  # NAME = number (unit): a constant
                    m.constants[n.text] = self.number()
                    if self.at("("):
                        self.unit()
                    continue
                u = self.unit()
                if self.at("("):
                    self.unit()
                key = u.replace(" ", "").lower()
                if key not in UNIT_CONSTANTS:
                    self.unsupported(n, "the unit constant (%s)" % u)
                m.constants[n.text] = repr(UNIT_CONSTANTS[key])
        self.expect("}")

    def unit(self):
        """A parenthesised unit; returns its text."""
        self.expect("(")
        parts, depth = [], 1
        while True:
            t = self.next()
            if t.kind == "eof":
                self.error(t, "unterminated unit")
            if t.text == "(":
                depth += 1
            elif t.text == ")":
                depth -= 1
                if depth == 0:
                    return "".join(parts)
            parts.append(t.text)

    def number(self):
        sign = ""
        if self.at("-") or self.at("+"):
            sign = "-" if self.next().text == "-" else ""
        t = self.next()
        if t.kind != "num":
            self.error(t, "expected a number, found '%s'" % (t.text or "end of file"))
        return sign + t.text

    def arglist(self):
        self.expect("(")
        args = []
        while not self.at(")"):
            args.append(self.name().text)
            if self.at("("):
                self.unit()
            if self.at(","):
                self.next()
        self.expect(")")
        return args

    # -- NEURON block
    def neuron_block(self, m):
        self.expect("{")
        while not self.at("}"):
            t = self.next()
            w = t.text
            if t.kind == "eof":
                self.error(t, "unterminated NEURON block")
            if w in ("SUFFIX", "POINT_PROCESS"):
                m.suffix = self.name().text
                m.point = w == "POINT_PROCESS"
                m.suffix_line = t.line
            elif w == "USEION":
                ion = self.name()
                if ion.text not in IONS:
                    self.unsupported(ion, "ion '%s' (supported: na, k, ca)" % ion.text)
                entry = m.ions.setdefault(ion.text, {"read": set(), "write": set(), "line": t.line})
                while self.at("READ") or self.at("WRITE") or self.at("VALENCE") or self.at("REPRESENTS"):
                    kw = self.next()
                    if kw.text == "VALENCE":
                        z = float(self.number())
                        if z != VALENCE[ion.text]:
                            self.unsupported(kw, "VALENCE %g for %s (its valence is %g)" % (z, ion.text, VALENCE[ion.text]))
                        continue
                    if kw.text == "REPRESENTS":  # an ontology annotation: ignored
                        self.name()
                        continue
                    x = ion.text
                    for n in self.name_list():
                        if n.text not in ("e" + x, "i" + x, x + "i", x + "o"):
                            self.error(n, "%s %s: not a variable of the ion %s (e%s, i%s, %si, %so)" % (
                                kw.text, n.text, x, x, x, x, x))
                        entry[kw.text.lower()].add(n.text)
            elif w == "NONSPECIFIC_CURRENT":
                m.nonspecific += [n.text for n in self.name_list()]
            elif w == "ELECTRODE_CURRENT":
                m.electrode += [n.text for n in self.name_list()]
            elif w == "RANGE":
                m.range |= {n.text for n in self.name_list()}
            elif w == "GLOBAL":
                m.globals |= {n.text for n in self.name_list()}
            elif w == "THREADSAFE":
                pass
            elif w == "REPRESENTS":  # an ontology annotation: ignored
                self.name()
            elif w == "ARTIFICIAL_CELL":
                nmodl_events.parse_artificial(self, m, t)
            elif w in ("POINTER", "BBCOREPOINTER", "EXTERNAL"):
                self.unsupported(t, w)
            else:
                self.error(t, "unexpected '%s' in the NEURON block" % w)
        self.expect("}")

    def name_list(self):
        out = [self.name()]
        while self.at(","):
            self.next()
            out.append(self.name())
        return out

    # -- PARAMETER / ASSIGNED / STATE
    def decl_block(self, out, values):
        self.expect("{")
        while not self.at("}"):
            n = self.next()
            if n.kind == "eof":
                self.error(n, "unterminated block")
            if n.kind != "name":
                self.error(n, "expected a name, found '%s'" % n.text)
            v = Var(n.text, n.line)
            if self.at("["):
                self.unsupported(self.peek(), "an array variable")
            if values and self.at("="):
                self.next()
                v.value = self.number()
            if self.at("("):
                v.unit = self.unit()
            if self.at("<"):
                self.next()
                lo = self.number()
                if self.at(">"):  # <tolerance>: CVODE's absolute tolerance, not a range
                    self.next()
                else:
                    v.lo = lo
                    self.expect(",")
                    v.hi = self.number()
                    self.expect(">")
            if self.at("FROM"):  # a range for NEURON's GUI: no effect on the simulation
                self.next()
                self.number()
                self.expect("TO")
                self.number()
            if self.at("START"):  # a STATE's start value for an INITIAL without assignment
                self.unsupported(self.peek(), "START in a declaration")
            out.append(v)
        self.expect("}")

    # -- statements
    def block(self, allow_solve=False, deriv=False, kinetic=False, initial=False):
        self.expect("{")
        body = []
        while not self.at("}"):
            if self.peek().kind == "eof":
                self.error(self.peek(), "unterminated block")
            st = self.statement(allow_solve, deriv, kinetic, initial)
            if st is not None:
                body.append(st)
        self.expect("}")
        return body

    def statement(self, allow_solve, deriv, kinetic=False, initial=False):
        t = self.next()
        w = t.text
        if w == "~" and self.in_linear:
            lhs = self.expr()
            self.expect("=")
            return ("lineq", lhs, self.expr(), t.line)
        if w == "~":
            if not kinetic:
                self.unsupported(t, "a reaction (~) outside a KINETIC block")
            return self.reaction(t)
        if w == "CONSERVE":
            if not kinetic:
                self.unsupported(t, "CONSERVE outside a KINETIC block")
            names = [self.name().text]
            while self.at("+"):
                self.next()
                names.append(self.name().text)
            self.expect("=")
            return ("conserve", names, self.expr(), t.line)
        if w == "SOLVE" and initial:
            blk = self.name().text
            if not self.at("STEADYSTATE"):  # a LINEAR block (the code generator checks)
                return ("solvelinear", blk, t.line)
            self.next()
            method = self.name()
            if method.text != "sparse":
                self.unsupported(method, "STEADYSTATE %s (supported: sparse)" % method.text)
            return ("steadystate", blk, t.line)
        if w in ("UNITSON", "UNITSOFF"):
            return None
        if w == "LOCAL":
            return ("local", [n.text for n in self.name_list()], t.line)
        if w == "TABLE":
            # accepted and ignored: rates are computed directly (nmodl/README.md)
            while not self.peek().kind == "eof":
                if self.at("WITH"):
                    self.next()
                    self.number()
                    break
                self.next()
            return None
        if w == "SOLVE":
            if not allow_solve:
                self.unsupported(t, "SOLVE outside BREAKPOINT")
            blk = self.name().text
            method = None
            if self.at("METHOD"):
                self.next()
                method = self.name()
                if method.text not in ("cnexp", "derivimplicit", "sparse"):
                    self.unsupported(method, "METHOD %s (supported: cnexp, derivimplicit, sparse)" % method.text)
                method = method.text
            if self.at("STEADYSTATE"):
                self.unsupported(self.peek(), "STEADYSTATE")
            return ("solve", blk, method, t.line)
        if w == "if":
            self.expect("(")
            cond = self.expr()
            self.expect(")")
            then = self.block(allow_solve, deriv, kinetic, initial)
            other = []
            if self.at("else"):
                self.next()
                if self.at("if"):
                    other = [self.statement(allow_solve, deriv, kinetic, initial)]
                else:
                    other = self.block(allow_solve, deriv, kinetic, initial)
            return ("if", cond, then, other, t.line)
        if w == "{":
            self.p -= 1
            return ("if", ("num", "1"), self.block(allow_solve, deriv, kinetic, initial), [], t.line)
        if w == "while":
            self.expect("(")
            cond = self.expr()
            self.expect(")")
            return ("while", cond, self.block(allow_solve, deriv, kinetic, initial), t.line)
        if w in ("VERBATIM", "FROM", "FOR_NETCONS", "WATCH", "CONSERVE", "COMPARTMENT", "MUTEXLOCK",
                 "MUTEXUNLOCK", "LAG", "SWEEP", "PROTECT", "printf"):
            self.unsupported(t, "'%s'" % w)
        if t.kind != "name":
            self.error(t, "unexpected '%s'" % w)
        if self.at("'"):
            if not deriv:
                self.unsupported(t, "a derivative outside a DERIVATIVE block")
            self.next()
            self.expect("=")
            return ("deriv", w, self.expr(), t.line)
        if self.at("="):
            self.next()
            return ("assign", w, self.expr(), t.line)
        if self.at("("):
            args = self.call_args()
            return ("callst", w, args, t.line)
        self.error(t, "unexpected '%s'" % w)

    def reaction(self, t):
        """~ A <-> B (kf, kb) and ~ A << (flux): first order, one state a side (linear)."""
        a = self.name()
        if self.at("+") or a.kind != "name":
            self.unsupported(t, "a reaction with more than one state a side (not linear)")
        if self.at("<<"):
            self.next()
            self.expect("(")
            e = self.expr()
            self.expect(")")
            return ("flux", a.text, e, t.line)
        if not self.at("<->"):
            self.unsupported(t, "this reaction (supported: ~ A <-> B (kf, kb), ~ A << (flux))")
        self.next()
        b = self.name()
        if self.at("+"):
            self.unsupported(t, "a reaction with more than one state a side (not linear)")
        self.expect("(")
        kf = self.expr()
        self.expect(",")
        kb = self.expr()
        self.expect(")")
        return ("reaction", a.text, b.text, kf, kb, t.line)

    def call_args(self):
        self.expect("(")
        args = []
        while not self.at(")"):
            args.append(self.expr())
            if self.at(","):
                self.next()
            elif not self.at(")"):
                self.error(self.peek(), "expected ',' or ')' in a call")
        self.expect(")")
        return args

    # -- expressions (C precedence; ^ right-associative, above unary minus as in NMODL)
    BINARY = [("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"), ("*", "/")]

    def expr(self, level=0):
        if level == len(self.BINARY):
            return self.unary()
        a = self.expr(level + 1)
        while self.peek().kind == "op" and self.peek().text in self.BINARY[level]:
            op = self.next().text
            a = ("bin", op, a, self.expr(level + 1))
        return a

    def unary(self):
        if self.at("-") or self.at("!") or self.at("+"):
            op = self.next().text
            a = self.unary()
            return a if op == "+" else ("un", op, a)
        return self.power()

    def power(self):
        a = self.primary()
        if self.at("^"):
            self.next()
            b = self.unary()
            return ("bin", "^", a, b)
        return a

    def primary(self):
        t = self.next()
        if t.kind == "num":
            if self.at("("):  # a number with its unit: 10 (degC)
                self.unit()
            return ("num", t.text)
        if t.text == "(":
            e = self.expr()
            self.expect(")")
            return e
        if t.kind == "name":
            if self.at("("):
                return ("call", t.text, self.call_args(), t.line)
            if self.at("["):
                self.unsupported(t, "an array index")
            return ("name", t.text, t.line)
        self.error(t, "unexpected '%s' in an expression" % (t.text or "end of file"))


def parse_file(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise NmodlError(path, 0, "cannot read: %s" % e.strerror)
    m = Parser(text, path).parse()
    if m.suffix is None:
        raise NmodlError(path, 1, "no SUFFIX or POINT_PROCESS in a NEURON block")
    return m

"""C (host and device) code for one parsed .mod file, following mechanisms/cs_mech.h.

For mechanism NAME it writes three files:
  NAME_body.h  the per-instance functions (CS_HD: compiled by the C compiler and by nvcc alike),
  NAME.c       the CPU loops over instances and the cs_mech_type,
  NAME.cu      CUDA kernels and their launchers (cs_mech_gpu_ops), when nvcc is there.
Variables: PARAMETERs (RANGE and GLOBAL alike) are the type's parameters, settable per
instance from the model; STATEs then ASSIGNED variables are its states (the ASSIGNED ones so
that they keep their values between calls and can be probed). v, celsius, dt, t come from the
view; e<ion> from the per-CV reversal potentials, i<ion> READ (not written) from the per-CV ion
current densities.
"""

import re

import nmodl_cuda
import nmodl_events
import nmodl_linear
from nmodl_lexer import NmodlError
from nmodl_parser import IONS
from nmodl_solve import ONE, ZERO, NonLinear, add, has_name, is_zero, linear, mul, solve_block
from nmodl_sparse import sparse_solve


def reached(text, code):
    """Generated code's text and the texts of the FUNCTIONs and PROCEDUREs it calls, directly or
    not (code: name -> text)."""
    seen, todo = set(), [text]
    while todo:
        t = todo.pop()
        yield t
        for name, body in code.items():
            if name not in seen and name + "(" in t:
                seen.add(name)
                todo.append(body)


def reaches_ions(text, code):
    """Whether generated code, or a FUNCTION or PROCEDURE it calls (code: name -> text, the calls'
    closure), reads or writes an ion's variable (the view's ion_e, ion_i, ion_ci, ion_co)."""
    return any("->ion_" in t for t in reached(text, code))


def slots_reached(text, code, assigned=False):
    """The state slots (_S(j)) and parameter slots (_P(j)) that generated code, or what it calls,
    reads or writes (assigned: only those it assigns): ({j}, {j})."""
    tail = r"\s*(?:=(?!=)|\+=|-=|\*=|/=)" if assigned else ""
    st, pa = set(), set()
    for t in reached(text, code):
        st |= {int(j) for j in re.findall(r"\b_S\((\d+)\)" + tail, t)}
        pa |= {int(j) for j in re.findall(r"\b_P\((\d+)\)" + tail, t)}
    return st, pa


def slots_set_first(lines, code):
    """The state slots that the code (lines of one function's body) assigns with a plain '=' before
    anything reads them, on every path: its statements scanned in order until the first branch or
    loop (after which nothing is sure), entering plain blocks and the PROCEDUREs called as whole
    statements; a FUNCTION called in an expression counts as reading all it reaches. Their old
    values are never used, so the state update need not load them (Gen.advance_entry): a rate
    computed by rates() then used, as most channels' mInf and mTau."""
    done, read = set(), set()

    def reads(t):
        ks = {int(k) for k in re.findall(r"\b_S\((\d+)\)", t)}
        for f in re.findall(r"\b(_f_\w+)\(", t):
            if f in code:
                ks |= slots_reached(code[f], code)[0]
        return ks

    def scan(body, stack=()):
        for line in body:
            t = line.strip()
            if not t or t.startswith("/*") or t.startswith("(void)") or re.fullmatch(r"\{( /\*.*\*/)?|\}", t):
                continue
            if re.match(r"(if|else|while|for|do|switch|return|break|\})\b|\}", t):
                return False  # a branch or a loop: the scan stops
            call = re.fullmatch(r"(_p_\w+)\((.*)\);", t)
            if call:
                read.update(reads(call.group(2)) - done)
                f = call.group(1)
                if f not in code or f in stack or not scan(code[f].split("\n")[1:-1], stack + (f,)):
                    return False  # unknown, recursive, or stopped inside
                continue
            if "_p_" in t:
                return False
            assign = re.fullmatch(r"_S\((\d+)\) = (.*);( /\*.*\*/)?", t)
            if assign:
                read.update(reads(assign.group(2)) - done)
                j = int(assign.group(1))
                if j not in read:
                    done.add(j)
            else:
                read.update(reads(t) - done)
        return True

    scan(lines)
    return done


class NoDerivative(Exception):
    pass

BUILTIN = {"v": "_c->v", "celsius": "_c->m->celsius", "dt": "_c->m->dt", "t": "_c->m->t"}
MATH1 = {"exp", "log", "log10", "fabs", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "atan",
         "floor", "ceil", "asin", "acos", "exprelr"}
MATH2 = {"pow", "fmin", "fmax", "atan2", "fmod"}
ION_ENUM = {"na": "CS_ION_NA", "k": "CS_ION_K", "ca": "CS_ION_CA"}
UNSUPPORTED_NAMES = {"f_flux", "b_flux", "area", "diam", "nrn_ghk", "net_send", "net_event", "net_move", "scop_random",
                     "normrand", "random", "printf"}


def cname(x):
    return re.sub(r"[^A-Za-z0-9_]", "_", x)


def c_number(text):
    if re.fullmatch(r"[-+]?\d+", text):
        return text + ".0"
    if text.startswith("."):
        return "0" + text
    return text


def wrapped(c):
    """c in one pair of parentheses (an if's condition), not two."""
    if c.startswith("(") and c.endswith(")"):
        depth = 0
        for i, ch in enumerate(c):
            depth += (ch == "(") - (ch == ")")
            if depth == 0 and i < len(c) - 1:
                break
        else:
            return c
    return "(%s)" % c


def c_limit(text, inf):
    if text is None or abs(float(text)) >= 1e300:  # <0, 1e300>: no upper bound
        return inf
    return c_number(text)


class Gen:
    def __init__(self, mod, builtin=False):
        self.builtin = builtin  # a built-in of libcablesim: type cs_mech_NAME, no GPU ops
        self.fold_mode = False  # expressions over param[j] (the fold function)
        self.m = mod
        self.path = mod.path
        self.name = mod.suffix
        self.c = cname(mod.suffix)
        self.ion_var = {}   # name -> (kind, ion): ("e", ion) read potential, ("i", ion) read current
        self.currents = []  # (name, ion or None)
        self.params = []    # Var
        self.states = []    # Var (STATE then ASSIGNED)
        self.nstate_true = 0
        self.uses_t = False  # reads t (on the GPU from the view's step context: cu_file)
        self.kin = None      # while generating a KINETIC block: {"idx": state -> row, "conserve": [...]}
        self.in_events = False  # generating INITIAL or NET_RECEIVE: net_send etc. allowed (nmodl_events)
        self.nmemo = 0  # call sites of exp/pow memoized on the CPU (memo_call)
        self.memo_ok = True  # False in NET_RECEIVE, which runs without a memo (as INITIAL: in_events)
        self.classify()

    def err(self, line, msg):
        raise NmodlError(self.path, line, msg)

    # ---- variables
    def classify(self):
        m = self.m
        written = set()
        self.conc_written = set()  # concentrations this type writes (xi, xo)
        for ion, d in m.ions.items():
            for n in sorted(d["read"] | d["write"]):
                if n in (ion + "i", ion + "o"):
                    # a concentration: the CV's, read and written in place (NEURON copies it in
                    # and out of the mechanism around each call: the same values)
                    self.ion_var[n] = ("ci" if n.endswith("i") else "co", ion)
                    if n in d["write"]:
                        if m.point:
                            self.err(d["line"], "a POINT_PROCESS writing an ion concentration is not supported")
                        self.conc_written.add(n)
                    continue
                if n.startswith("e"):
                    if n in d["write"]:
                        self.err(d["line"], "WRITE %s (a reversal potential) is not supported" % n)
                    self.ion_var[n] = ("e", ion)
                elif n not in d["write"]:
                    self.ion_var[n] = ("i", ion)
                else:
                    if m.point:
                        self.err(d["line"], "a POINT_PROCESS writing an ion current is not supported")
                    self.currents.append((n, ion))
        for n in m.nonspecific:
            self.currents.append((n, None))
        self.electrode = list(m.electrode)  # inward positive: subtracted
        for n in self.electrode:
            self.currents.append((n, None))
        skip = set(BUILTIN) | set(self.ion_var)
        seen = set()
        for v in m.params:
            if v.name in skip or v.name in seen:
                continue
            if v.value is None:
                v.value = "0"
            seen.add(v.name)
            self.params.append(v)
        for v in m.states:
            if v.name in self.ion_var:  # a concentration STATE: the CV's (kept by the backend)
                continue
            if v.name in seen:
                self.err(v.line, "'%s' is declared twice" % v.name)
            seen.add(v.name)
            self.states.append(v)
        self.nstate_true = len(self.states)
        for v in m.assigned:
            if v.name in skip or v.name in seen:
                continue
            seen.add(v.name)
            self.states.append(v)
        for n, _ in self.currents:
            if n not in seen:
                from nmodl_parser import Var
                self.states.append(Var(n, m.suffix_line, "nA" if m.point else "mA/cm2"))
                seen.add(n)
        self.pidx = {v.name: j for j, v in enumerate(self.params)}
        self.sidx = {v.name: j for j, v in enumerate(self.states)}
        if len(self.params) > 32:
            self.err(m.suffix_line, "more than 32 PARAMETERs is not supported")
        if len(self.states) > 64:
            self.err(m.suffix_line, "more than 64 STATE and ASSIGNED variables is not supported")
        nmodl_events.check(self)
        if m.breakpoint is None and not m.artificial:
            self.err(m.suffix_line, "a mechanism without a BREAKPOINT block is not supported")
        if not self.currents and not self.conc_written and not m.artificial:
            self.err(m.suffix_line, "a mechanism that writes no current (nor a concentration) is not supported")

    # ---- expressions
    def expr(self, e, scope):
        k = e[0]
        if k == "raw":
            return e[1]
        if k == "num":
            return c_number(e[1])
        if k == "name":
            return self.ref(e[1], e[2], scope)
        if k == "un":
            return "(%s%s)" % (e[1], self.expr(e[2], scope))
        if k == "bin":
            a, b = self.expr(e[2], scope), self.expr(e[3], scope)
            if e[1] == "^":
                return self.memo_call("pow", [e[2], e[3]], [a, b], scope)
            return "(%s %s %s)" % (a, e[1], b)
        if k == "call":
            return self.call(e[1], e[2], e[3], scope)
        raise AssertionError(e)

    def ref(self, n, line, scope, write=False):
        if n in scope:
            return scope[n]
        if n == "t":
            self.uses_t = True
        if n == "v" and self.m.artificial:
            self.err(line, "'v' in an ARTIFICIAL_CELL (it has no membrane)")
        if n in BUILTIN:
            if write and n != "v":
                self.err(line, "assigning to '%s' is not supported" % n)
            return BUILTIN[n]
        if n in self.pidx:
            return ("param[%d]" if self.fold_mode else "_P(%d)") % self.pidx[n]
        if n in self.sidx:
            return "_S(%d)" % self.sidx[n]
        if n in self.ion_var:
            kind, ion = self.ion_var[n]
            if write and n not in self.conc_written:
                self.err(line, "assigning to '%s' (read from the ion %s) is not supported" % (n, ion))
            arr = {"e": "ion_e", "i": "ion_i", "ci": "ion_ci", "co": "ion_co"}[kind]
            return "_c->m->%s[%s][_c->node]" % (arr, ION_ENUM[ion])
        if n in self.m.constants:
            if write:
                self.err(line, "assigning to the constant '%s'" % n)
            return "(%s)" % c_number(self.m.constants[n])
        if n in UNSUPPORTED_NAMES:
            self.err(line, "'%s' is not supported" % n)
        if n == "flag" and self.m.net_receive:
            self.err(line, "'flag' (self-events, net_send) is not supported")
        self.err(line, "'%s' is not declared" % n)

    def call(self, f, args, line, scope):
        a = [self.expr(x, scope) for x in args]
        if f in nmodl_events.EVENT_CALLS:
            return nmodl_events.event_call(self, f, a, line)
        if f == "at_time" and f not in self.m.functions:
            return "0.0"  # a discontinuity hint for variable steps; 0 in a fixed step, as in NEURON
        if f in MATH1 and f not in self.m.functions:
            if len(a) != 1:
                self.err(line, "%s takes one argument" % f)
            if f == "exp":
                return self.memo_call("exp", args, a, scope)
            return "%s(%s)" % ("cs_nmodl_exprelr" if f == "exprelr" else f, a[0])
        if f in MATH2 and f not in self.m.functions:
            if len(a) != 2:
                self.err(line, "%s takes two arguments" % f)
            if f == "pow":
                return self.memo_call("pow", args, a, scope)
            return "%s(%s, %s)" % (f, a[0], a[1])
        if f in self.m.functions:
            want = len(self.m.functions[f][0])
            if want != len(a):
                self.err(line, "%s takes %d arguments, given %d" % (f, want, len(a)))
            return "_f_%s(%s)" % (cname(f), ", ".join(["_c"] + a))
        if f in self.m.procedures:
            self.err(line, "PROCEDURE %s used as a value" % f)
        self.err(line, "the function '%s' is not supported" % f)

    def invariant(self, e, scope):
        """e depends only on parameters, constants, dt and celsius (the same at every step of an
        instance), through arithmetic and the built-in math functions."""
        k = e[0]
        if k == "num":
            return True
        if k == "name":
            n = e[1]
            return n not in scope and (n in self.pidx or n in self.m.constants or n in ("dt", "celsius"))
        if k == "un":
            return self.invariant(e[2], scope)
        if k == "bin":
            return self.invariant(e[2], scope) and self.invariant(e[3], scope)
        if k == "call":
            return (e[1] in MATH1 | MATH2 and e[1] not in self.m.functions
                    and all(self.invariant(x, scope) for x in e[2]))
        return False

    def memo_call(self, f, args, a, scope):
        """exp or pow; memoized on the CPU (cs_nmodl_exp_m) where its arguments are invariant. A
        power of 2, 3 or 4 (a literal) is cs_nmodl_pown: pow on the CPU, products on the GPU."""
        n = args[1][1] if f == "pow" and args[1][0] == "num" and float(args[1][1]) in (2.0, 3.0, 4.0) else None
        if n is not None:
            f, a = "pown", [a[0], "%d" % int(float(n))]
        if self.fold_mode or self.in_events or not self.memo_ok or not all(self.invariant(x, scope) for x in args):
            return "%s(%s)" % ("cs_nmodl_pown" if n is not None else f, ", ".join(a))
        site = self.nmemo
        self.nmemo += 1
        return "cs_nmodl_%s_m(_c->memo ? _c->memo + %d : NULL, %s)" % (f, site, ", ".join(a))

    # ---- statements
    def stmts(self, body, scope, ind, fname=None):
        out = []
        scope = dict(scope)
        pad = "    " * ind
        for s in body:
            k = s[0]
            if k == "local":
                for n in s[1]:
                    scope[n] = "_l_" + cname(n)
                out.append(pad + "double %s;" % ", ".join("_l_%s = 0.0" % cname(n) for n in s[1]))
            elif k == "assign":
                _, n, e, line = s
                lhs = "_ret" if n == fname else self.ref(n, line, scope, write=True)
                out.append(pad + "%s = %s;" % (lhs, self.expr(e, scope)))
            elif k == "if":
                out.append(pad + "if %s {" % wrapped(self.expr(s[1], scope)))
                out += self.stmts(s[2], scope, ind + 1, fname)
                if s[3]:
                    out.append(pad + "} else {")
                    out += self.stmts(s[3], scope, ind + 1, fname)
                out.append(pad + "}")
            elif k == "callst":
                _, f, args, line = s
                if f in self.m.procedures:
                    want = len(self.m.procedures[f][0])
                    if want != len(args):
                        self.err(line, "%s takes %d arguments, given %d" % (f, want, len(args)))
                    out.append(pad + "_p_%s(%s);" % (cname(f), ", ".join(["_c"] + [self.expr(a, scope) for a in args])))
                else:
                    out.append(pad + "(void)%s;" % self.call(f, args, line, scope))
            elif k == "reaction":
                _, a, b, kf, kb, line = s
                ia, ib = self.kin_index(a, line), self.kin_index(b, line)
                self.kin_linear(kf, line)
                self.kin_linear(kb, line)
                out.append(pad + "{ /* ~ %s <-> %s */" % (a, b))
                out.append(pad + "    double _kf = %s, _kb = %s;" % (self.expr(kf, scope), self.expr(kb, scope)))
                out.append(pad + "    _M[%d][%d] -= _kf; _M[%d][%d] += _kf; _M[%d][%d] -= _kb; _M[%d][%d] += _kb;" % (
                    ia, ia, ib, ia, ib, ib, ia, ib))
                self.kin["nz"] |= {(ia, ia), (ib, ia), (ib, ib), (ia, ib)}
                out.append(pad + "}")
            elif k == "flux":
                _, a, e, line = s
                ia = self.kin_index(a, line)
                self.kin_linear(e, line)
                out.append(pad + "_src[%d] += %s; /* ~ %s << */" % (ia, self.expr(e, scope), a))
            elif k == "conserve":
                _, names, e, line = s
                if ind != 1 + self.kin["depth"]:
                    self.err(line, "CONSERVE inside an if is not supported")
                for n in names:
                    self.kin_index(n, line)
                self.kin["conserve"].append((names, self.expr(e, scope), line))
            elif k == "steadystate":
                _, blk, line = s
                if blk not in self.m.kinetics:
                    self.err(line, "SOLVE %s STEADYSTATE: no KINETIC block of that name" % blk)
                out += self.kinetic_code(blk, "steady", ind, line)
            elif k == "while":
                out.append(pad + "while %s {" % wrapped(self.expr(s[1], scope)))
                out += self.stmts(s[2], scope, ind + 1, fname)
                out.append(pad + "}")
            elif k == "linsys":  # derivimplicit of a coupled linear system (nmodl_solve.py)
                _, xs, B, A, line = s
                n = len(xs)
                if n > 32:
                    self.err(line, "a coupled system of more than 32 states is not supported")
                out.append(pad + "{ /* coupled: (1 - dt*B) x_new = x + dt*a */")
                out.append(pad + "    double _M[%d][%d], _x[%d];" % (n, n, n))
                for i, x in enumerate(xs):
                    for j in range(n):
                        out.append(pad + "    _M[%d][%d] = %s - _c->m->dt * %s;" % (
                            i, j, "1.0" if i == j else "0.0", self.expr(B[i][j], scope)))
                    out.append(pad + "    _x[%d] = %s + _c->m->dt * %s;" % (i, self.ref(x, line, scope), self.expr(A[i], scope)))
                out.append(pad + "    cs_nmodl_solve(%d, &_M[0][0], _x);" % n)
                for i, x in enumerate(xs):
                    out.append(pad + "    %s = _x[%d];" % (self.ref(x, line, scope, write=True), i))
                out.append(pad + "}")
            elif k == "solvelinear":
                out += self.linear_code(s[1], ind, s[2])
            elif k == "lineq":
                self.err(s[3], "an equation (~) outside a SOLVEd LINEAR block")
            elif k == "solve":
                self.err(s[3], "SOLVE outside BREAKPOINT is not supported")
            elif k == "deriv":
                self.err(s[3], "a derivative outside a SOLVEd DERIVATIVE block is not supported")
            else:
                raise AssertionError(s)
        return out

    # ---- KINETIC (METHOD sparse; STEADYSTATE sparse): linear first-order schemes
    def kin_index(self, n, line):
        if n not in self.sidx or self.sidx[n] >= self.nstate_true:
            self.err(line, "'%s' in a reaction is not a STATE" % n)
        idx = self.kin["idx"]
        if n not in idx:
            if len(idx) == 32:
                self.err(line, "a KINETIC scheme of more than 32 states is not supported")
            idx[n] = len(idx)
        return idx[n]

    def kin_linear(self, e, line):
        for n in self.m.states:
            if has_name(e, n.name):
                self.err(line, "a reaction rate that depends on a STATE (%s; not linear) is not supported" % n.name)

    def kinetic_code(self, blk, mode, ind, line):
        """The KINETIC block's scheme dx/dt = K·x + src, solved for the step by backward Euler,
        (1 − dt·K)·x_new = x + dt·src (what NEURON's sparse gives a linear scheme), or for the
        steady state, −K·x = src; each CONSERVE replaces the row of its last state by its law."""
        pad = "    " * ind
        outer = self.kin
        if outer is not None:
            self.err(line, "a KINETIC block solved inside another is not supported")
        self.kin = {"idx": {}, "conserve": [], "depth": ind, "nz": set()}
        try:
            body = self.stmts(self.m.kinetics[blk], {}, ind + 1)
            idx, cons, nz = self.kin["idx"], self.kin["conserve"], self.kin["nz"]
        finally:
            self.kin = None
        n = len(idx)
        if n == 0:
            self.err(line, "KINETIC %s has no reaction" % blk)
        L = [pad + "{ /* KINETIC %s, %s */" % (blk, "backward Euler" if mode == "step" else "steady state"),
             pad + "    double _M[%d][%d] = {{0}}, _src[%d] = {0}, _x[%d];" % (n, n, n, n)]
        L += body
        st = {v: k for k, v in idx.items()}
        for i in range(n):
            r = self.ref(st[i], line, {})
            if mode == "step":
                L.append(pad + "    for (int _j = 0; _j < %d; ++_j) _M[%d][_j] = (_j == %d) - _c->m->dt * _M[%d][_j];" % (n, i, i, i))
                L.append(pad + "    _x[%d] = %s + _c->m->dt * _src[%d];" % (i, r, i))
            else:
                L.append(pad + "    for (int _j = 0; _j < %d; ++_j) _M[%d][_j] = -_M[%d][_j];" % (n, i, i))
                L.append(pad + "    _x[%d] = _src[%d];" % (i, i))
        if mode == "step":
            nz |= {(i, i) for i in range(n)}
        for names, total, cl in cons:
            row = idx[names[-1]]
            L.append(pad + "    for (int _j = 0; _j < %d; ++_j) _M[%d][_j] = 0.0; /* CONSERVE */" % (n, row))
            nz = {(i, j) for i, j in nz if i != row}
            for nm in names:
                L.append(pad + "    _M[%d][%d] += 1.0;" % (row, idx[nm]))
                nz.add((row, idx[nm]))
            L.append(pad + "    _x[%d] = %s;" % (row, total))
        L += sparse_solve(n, nz, pad + "    ", last=[idx[names[-1]] for names, _, _ in cons])
        for i in range(n):
            L.append(pad + "    %s = _x[%d];" % (self.ref(st[i], line, {}, write=True), i))
        L.append(pad + "}")
        return L

    # ---- LINEAR blocks (SOLVE name in INITIAL): a linear system in the STATEs its equations use
    def linear_code(self, blk, ind, line):
        """Each ~ lhs = rhs is one row of M·x = c over the STATEs that appear in the block's
        equations (in declaration order), as NEURON's LINEAR: lhs − rhs = Σ M[i][j]·x_j − c_i."""
        if blk not in self.m.linears:
            self.err(line, "SOLVE %s in INITIAL: no LINEAR block of that name (supported: LINEAR, or a "
                     "KINETIC block with STEADYSTATE sparse)" % blk)
        body = self.m.linears[blk]
        eqs = [s for s in body if s[0] == "lineq"]
        xs = [v.name for v in self.m.states if any(has_name(("bin", "-", s[1], s[2]), v.name) for s in eqs)]
        if len(eqs) != len(xs):
            self.err(line, "LINEAR %s: %d equations in %d states" % (blk, len(eqs), len(xs)))
        if len(xs) > 32:
            self.err(line, "a LINEAR block of more than 32 states is not supported")
        pad = "    " * ind
        n = len(xs)
        L = [pad + "{ /* LINEAR %s */" % blk, pad + "    double _M[%d][%d], _x[%d];" % (n, n, n)]
        L += self.stmts([s for s in body if s[0] != "lineq"], {}, ind + 1)
        for i, (_, lhs, rhs, ln) in enumerate(eqs):
            rest = ("bin", "-", lhs, rhs)
            for j, x in enumerate(xs):
                try:
                    b, rest = linear(rest, x)
                except NonLinear:
                    self.err(ln, "an equation of LINEAR %s not linear in %s" % (blk, x))
                if any(has_name(b, y) for y in xs):
                    self.err(ln, "an equation of LINEAR %s not linear in its states" % blk)
                L.append(pad + "    _M[%d][%d] = %s;" % (i, j, self.expr(b, {})))
            L.append(pad + "    _x[%d] = -(%s);" % (i, self.expr(rest, {})))
        L.append(pad + "    cs_nmodl_solve(%d, &_M[0][0], _x);" % n)
        for i, x in enumerate(xs):
            L.append(pad + "    %s = _x[%d];" % (self.ref(x, line, {}, write=True), i))
        L.append(pad + "}")
        return L

    # ---- conductance: forward-mode derivative d/dv of the BREAKPOINT's straight-line code
    def deriv(self, e, d):
        k = e[0]
        if k in ("num", "raw"):
            return ZERO
        if k == "name":
            if e[1] == "v":
                return ONE
            return d.get(e[1], ZERO)
        if k == "un":
            if e[1] == "!":
                return ZERO
            a = self.deriv(e[2], d)
            return ZERO if is_zero(a) else ("un", "-", a)
        if k == "call":
            da = [self.deriv(a, d) for a in e[2]]
            if all(is_zero(x) for x in da):
                return ZERO
            if e[1] == "exp" and e[1] not in self.m.functions:
                return mul(e, da[0])
            raise NoDerivative()
        op, a, b = e[1], e[2], e[3]
        if op in ("==", "!=", "<", "<=", ">", ">=", "&&", "||"):
            return ZERO
        da, db = self.deriv(a, d), self.deriv(b, d)
        if op in "+-":
            return add(da, db, op)
        if op == "*":
            return add(mul(da, b), mul(a, db))
        if op == "/":
            if is_zero(db):
                return ZERO if is_zero(da) else ("bin", "/", da, b)
            return ("bin", "/", add(mul(da, b), mul(a, db), "-"), ("bin", "*", b, b))
        if op == "^" and is_zero(da) and is_zero(db):
            return ZERO
        raise NoDerivative()

    def symbolic_currents(self, bp):
        """(lines, C expression of dI/dv); NoDerivative when the block branches or calls."""
        d, lines, scope = {}, [], {}
        for s in bp:
            if s[0] == "local":
                lines += self.stmts([s], {}, 1)
                for n in s[1]:
                    scope[n] = "_l_" + cname(n)
                continue
            if s[0] != "assign" or s[1] == "v":
                raise NoDerivative()
            _, n, e, line = s
            lines.append("    %s = %s;" % (self.ref(n, line, scope, write=True), self.expr(e, scope)))
            de = self.deriv(e, d)
            if is_zero(de):
                d[n] = ZERO
            else:
                dn = "_d_" + cname(n)
                if dn not in scope.values():
                    lines.append("    double %s;" % dn)
                    scope["\0" + dn] = dn
                lines.append("    %s = %s;" % (dn, self.expr(de, scope)))
                d[n] = ("raw", dn)
        g = ZERO
        for n, _ in self.currents:
            dn = d.get(n, ZERO)
            g = add(g, dn, "-" if n in self.electrode else "+")
        return lines, self.expr(g, scope)

    def fold_code(self):
        """i = G·(v − E) with G, E parameters only: the fold of cs_mech_type (pas)."""
        m = self.m
        bp = m.breakpoint
        if (m.point or len(bp) != 1 or bp[0][0] != "assign" or len(self.currents) != 1 or self.electrode
                or bp[0][1] != self.currents[0][0] or m.ions):
            return None
        e = bp[0][2]
        if not (e[0] == "bin" and e[1] == "*" and e[3][0] == "bin" and e[3][1] == "-" and e[3][2] == ("name", "v", e[3][2][-1])):
            return None
        G, E = e[2], e[3][3]
        names = set()

        def walk(y):
            if y[0] == "name":
                names.add(y[1])
            elif y[0] == "un":
                walk(y[2])
            elif y[0] == "bin":
                walk(y[2])
                walk(y[3])
            elif y[0] == "call":
                for z in y[2]:
                    walk(z)
        walk(G)
        walk(E)
        if any(n not in self.pidx and n not in m.constants for n in names):
            return None
        self.fold_mode = True
        try:
            g, e_ = self.expr(G, {}), self.expr(E, {})
        finally:
            self.fold_mode = False
        return ["static void _fold(const double *param, double weight, double *g, double *ge) {",
                "    *g = weight * %s; /* [uS] */" % g,
                "    *ge = weight * %s * %s; /* [nA] */" % (g, e_), "}"]

    # ---- the body header
    def body_header(self):
        m, c = self.m, self.c
        L = ["/* Generated by cablesim's NMODL compiler from %s: do not edit. */" % m.path,
             "#include <math.h>", "#include \"cs_mech.h\"", "#include \"cs_nmodl_rt.h\"", "",
             "/* memo: the CPU loop's exp/pow memo (cs_nmodl_memo), NULL elsewhere */",
             "/* s, p, ks: where _S and _P are: the view's arrays and instance k, or (the state update) the",
             " * instance's values copied into locals, instance 0 of them */",
             "typedef struct {",
             "    const cs_mech_view *m;",
             "    int k, node;",
             "    double v;",
             "    cs_nmodl_memo *memo;",
             "    double *const *s, *const *p;",
             "    int ks;",
             "} _ctx;",
             "#define _P(j) (_c->p[j][_c->ks])", "#define _S(j) (_c->s[j][_c->ks])", ""]
        for f, (args, body, line) in m.functions.items():
            L.append("static CS_HD double _f_%s(%s);" % (cname(f), ", ".join(["_ctx *_c"] + ["double _a_%s" % cname(a) for a in args])))
        for f, (args, body, line) in m.procedures.items():
            L.append("static CS_HD void _p_%s(%s);" % (cname(f), ", ".join(["_ctx *_c"] + ["double _a_%s" % cname(a) for a in args])))
        L.append("")
        code = {}  # each FUNCTION's and PROCEDURE's generated text: what the state update reaches
        for kind, table in (("f", m.functions), ("p", m.procedures)):
            for f, (args, body, line) in table.items():
                scope = {a: "_a_" + cname(a) for a in args}
                sig = ", ".join(["_ctx *_c"] + ["double _a_%s" % cname(a) for a in args])
                first = len(L)
                if kind == "f":
                    scope[f] = "_ret"  # the FUNCTION's name as a variable: its value so far
                    L.append("static CS_HD double _f_%s(%s) {" % (cname(f), sig))
                    L.append("    double _ret = 0.0;")
                    L += self.stmts(body, scope, 1, fname=f)
                    L.append("    return _ret;")
                else:
                    L.append("static CS_HD void _p_%s(%s) {" % (cname(f), sig))
                    L += self.stmts(body, scope, 1)
                L.append("    (void)_c;")
                L.append("}")
                code["_%s_%s" % (kind, cname(f))] = "\n".join(L[first:])
        # INITIAL
        L.append("static CS_HD void _init_one(const cs_mech_view *_m, int _k) {")
        L.append("    _ctx _cc = {_m, _k, 0, 0.0, NULL, _m->state, _m->param, _k}, *_c = &_cc;" if m.artificial else
                 "    _ctx _cc = {_m, _k, _m->node[_k], _m->v[_m->node[_k]], NULL, _m->state, _m->param, _k}, *_c = &_cc;")
        for j, v in enumerate(self.states):
            init = "0.0"
            if j < self.nstate_true and (v.name + "0") in self.pidx:
                init = "_P(%d)" % self.pidx[v.name + "0"]
            L.append("    _S(%d) = %s; /* %s */" % (j, init, v.name))
        self.in_events = True
        L += self.stmts(m.initial or [], {}, 1)
        self.in_events = False
        L.append("}")
        if m.artificial:  # no current, no state update: events only
            L += nmodl_events.receive_code(self)
            return "\n".join(L) + "\n"
        # BREAKPOINT without SOLVE: the currents at _c->v, and their conductance dI/dv, by
        # differentiating the block's straight-line code (exact, one evaluation), else NEURON's
        # numerical derivative (nrn_cur: I at v + 0.001 and at v)
        bp = [s for s in m.breakpoint if s[0] != "solve"]
        try:
            body, gexpr = self.symbolic_currents(bp)
        except NoDerivative:
            body, gexpr = self.stmts(bp, {}, 1), None
        cur0 = len(L)  # _currents' lines: its outputs kept in locals below (outputs_local)
        L.append("static CS_HD double _currents(_ctx *_c, double *_ion, double *_g) {")
        L += body
        total = []
        for n, ion in self.currents:
            r = self.ref(n, m.suffix_line, {})
            total.append(("-" if n in self.electrode else "+") + " " + r)
            if ion:
                L.append("    _ion[%s] = %s;" % (ION_ENUM[ion], r))
        L.append("    *_g = %s;" % (gexpr or "0.0"))
        L.append("    return %s;" % (" ".join(total).lstrip("+ ") or "0.0"))
        L.append("}")
        cur1 = len(L)
        L.append("static CS_HD void _current_onem(const cs_mech_view *_m, int _k, double *_i, double *_g, double *_ion,")
        L.append("                                 cs_nmodl_memo *_memo) {")
        L.append("    int _node = _m->node[_k];")
        if gexpr is not None:
            L.append("    _ctx _cc = {_m, _k, _node, _m->v[_node], _memo, _m->state, _m->param, _k}, *_c = &_cc;")
            L.append("    *_i = _currents(_c, _ion, _g); /* [%s], [%s] */" % (
                "nA" if m.point else "mA/cm2", "uS" if m.point else "S/cm2"))
        else:
            L.append("    double _unused;")
            L.append("    _ctx _cc = {_m, _k, _node, _m->v[_node] + 0.001, _memo, _m->state, _m->param, _k}, *_c = &_cc;")
            L.append("    double _i1 = _currents(_c, _ion, &_unused);")
            L.append("    _cc.v = _m->v[_node];")
            L.append("    double _i0 = _currents(_c, _ion, &_unused);")
            L.append("    *_i = _i0; /* [%s] */" % ("nA" if m.point else "mA/cm2"))
            L.append("    *_g = (_i1 - _i0) / 0.001; /* [%s] */" % ("uS" if m.point else "S/cm2"))
        L.append("}")
        L.append("static CS_HD void _current_one(const cs_mech_view *_m, int _k, double *_i, double *_g, double *_ion) {")
        L.append("    _current_onem(_m, _k, _i, _g, _ion, NULL);")
        L.append("}")
        # advance: the SOLVEd block
        first = len(L)
        for s in m.breakpoint:
            if s[0] != "solve":
                continue
            _, blk, method, line = s
            if method == "sparse":
                if blk not in m.kinetics:
                    self.err(line, "METHOD sparse: %s is not a KINETIC block" % blk)
                L += self.kinetic_code(blk, "step", 1, line)
            elif blk in m.kinetics:
                self.err(line, "KINETIC %s: only METHOD sparse is supported" % blk)
            elif blk in m.derivatives:
                if method is None:
                    self.err(line, "SOLVE %s without METHOD is not supported" % blk)
                body = solve_block(self.path, m.derivatives[blk], set(v.name for v in self.m.states), method)
                L += self.stmts(body, {}, 1)
            elif blk in m.procedures:
                L.append("    _p_%s(_c);" % cname(blk))
            else:
                self.err(line, "SOLVE %s: no DERIVATIVE block of that name" % blk)
        L[first:] = self.advance_entry(L[first:], code)
        self.advance_ion_free = not reaches_ions("\n".join(L[first:]), code)
        # a linear system solved every step (KINETIC, derivimplicit's coupled systems): its matrix
        # takes ~250 registers, which a launch shared with other types would impose on them all
        self.advance_solves = "double _M[" in "\n".join(L[first:])
        L.append("static CS_HD void _advance_one(const cs_mech_view *_m, int _k) { _advance_onem(_m, _k, NULL); }")
        if m.net_receive and not nmodl_events.takes_vector(m):  # a single weight (on the GPU too)
            args, body, line = m.net_receive
            scope = {a: "_a_" + cname(a) for a in args}
            L.append("static CS_HD void _receive_one(const cs_mech_view *_m, int _k, double %s) {" % (
                "_a_" + cname(args[0]) if args else "_w"))
            L.append("    _ctx _cc = {_m, _k, _m->node[_k], _m->v[_m->node[_k]], NULL, _m->state, _m->param, _k}, *_c = &_cc;")
            self.memo_ok = False
            L += self.stmts(body, scope, 1)
            self.memo_ok = True
            L.append("    (void)_c;")
            L.append("}")
        L += nmodl_events.receive_code(self)
        L[cur0:cur1] = self.outputs_local(L[cur0:cur1], "\n".join(L[cur1:]), code)
        return "\n".join(L) + "\n"

    def outputs_local(self, cur, rest, code):
        """_currents (lines cur) with its outputs in locals: the ASSIGNED variables that its own
        body sets before reading them and that nothing else reads (rest: the state update and
        NET_RECEIVE; nor what _currents calls) are stored to the instance's arrays only where the
        view asks (cs_mech_view.skip_outputs 0: a probe may read them). Exp2Syn's i and g are 16
        bytes an instance a step that nothing reads (its million synapses on the Allen network).
        Same arithmetic, same results."""
        text = "\n".join(cur[1:])
        called = "\n".join(list(reached(text, code))[1:])  # the FUNCTIONs and PROCEDUREs it calls
        others = slots_reached(rest, code)[0] | slots_reached(called, code)[0]
        own = slots_reached(text, {}, assigned=True)[0]
        first = slots_set_first(cur[1:], code)
        out = sorted(j for j in own & first if j >= self.nstate_true and j not in others)
        if not out:
            return cur
        sub = lambda t: re.sub(r"\b_S\((\d+)\)", lambda mm: "_o%s" % mm.group(1) if int(mm.group(1)) in out else mm.group(0), t)
        body = [sub(t) for t in cur[1:-1]]
        ret = body.pop()  # the return statement: the outputs are stored before it
        store = ["    if (!_c->m->skip_outputs) { /* a probe may read them */"]
        store += ["        _S(%d) = _o%d; /* %s */" % (j, j, self.states[j].name) for j in out]
        store += ["    }"]
        return [cur[0], "    double %s;" % ", ".join("_o%d" % j for j in out)] + body + store + [ret, cur[-1]]

    def advance_entry(self, body, code):
        """The state update's entry around its body: the instance's states and parameters that the
        body reaches are read into locals first (but the states it sets before reading them) and
        the ones it assigns written back last; the body finds them through its context (_ctx.s, p:
        instance 0 of the locals). Through the view's arrays, every read after a store of a state
        had to go back to memory (the compiler cannot rule out that they alias): a KINETIC
        scheme's 32 rates, each stored then read, were a chain of dependent round trips on the
        GPU. Same arithmetic, same results."""
        text = "\n".join(body)
        st, pa = slots_reached(text, code)
        wst, wpa = slots_reached(text, code, assigned=True)
        st -= slots_set_first(body, code)
        ns, np_ = max(1, len(self.states)), max(1, len(self.params))
        L = ["static CS_HD void _advance_onem(const cs_mech_view *_m0, int _k0, cs_nmodl_memo *_memo) {",
             "    double _sv[%d], _pv[%d]; /* the instance's states and parameters that the update reaches */" % (ns, np_),
             "    double *_sp[%d], *_pp[%d];" % (ns, np_)]
        L += ["    _sv[%d] = _m0->state[%d][_k0]; _sp[%d] = &_sv[%d];" % (j, j, j, j) for j in sorted(st)]
        L += ["    _sp[%d] = &_sv[%d]; /* set before it is read */" % (j, j) for j in sorted(wst - st)]
        L += ["    _pv[%d] = _m0->param[%d][_k0]; _pp[%d] = &_pv[%d];" % (j, j, j, j) for j in sorted(pa)]
        L += ["    _ctx _cc = {_m0, _k0, _m0->node[_k0], _m0->v[_m0->node[_k0]], _memo, _sp, _pp, 0}, *_c = &_cc;"]
        L += body
        L += ["    _m0->state[%d][_k0] = _sv[%d];" % (j, j) for j in sorted(wst)]
        L += ["    _m0->param[%d][_k0] = _pv[%d];" % (j, j) for j in sorted(wpa)]
        L += ["    (void)_c;", "    (void)_sp;", "    (void)_pp;", "}"]
        return L

    def ions_mask(self, which):
        """ion_read: e or i read; ion_write: i written; conc_read / conc_write: xi or xo."""
        bits = []
        for ion, d in self.m.ions.items():
            conc = {ion + "i", ion + "o"}
            if which == "read":
                hit = any(n not in conc for n in d["read"] - d["write"])
            elif which == "write":
                hit = any(n not in conc for n in d["write"])
            elif which == "conc_read":
                hit = bool((d["read"] | d["write"]) & conc)
            else:
                hit = bool(d["write"] & conc)
            if hit:
                bits.append("(1u << %s)" % ION_ENUM[ion])
        return " | ".join(bits) or "0u"

    def written_ions(self):
        return [ion for n, ion in self.currents if ion]

    # ---- the CPU file
    def c_file(self, cuda):
        m, c = self.m, self.c
        L = ["/* Generated by cablesim's NMODL compiler from %s: do not edit. */" % m.path,
             "#include <math.h>", "#include <stddef.h>", "#include \"%s_body.h\"" % c, ""]
        L.append("static const cs_mech_field _params[] = {")
        for v in self.params:
            L.append("    {\"%s\", \"%s\", %s, %s, %s}," % (v.name, v.unit, c_number(v.value),
                                                        c_limit(v.lo, "-INFINITY"), c_limit(v.hi, "INFINITY")))
        L.append("    {NULL, NULL, 0, 0, 0}};")
        L.append("static const cs_mech_field _states[] = {")
        for v in self.states:
            L.append("    {\"%s\", \"%s\", 0.0, -INFINITY, INFINITY}," % (v.name, v.unit))
        L.append("    {NULL, NULL, 0, 0, 0}};")
        L.append("static void _init(const cs_mech_view *m) { for (int k = 0; k < m->n; ++k) _init_one(m, k); }")
        if not m.artificial:  # an artificial cell has no current and no state update (nmodl_events)
            # a memo only where some call site has one (memo_call); else NULL, nothing to clear
            memo = ["    cs_nmodl_memo memo[%d]; /* exp/pow of parameters, reused across instances */" % self.nmemo,
                    "    memset(memo, 0, sizeof memo);"] if self.nmemo else ["    cs_nmodl_memo *memo = NULL;"]
            L.append("static void _current(const cs_mech_view *m) {")
            L += memo
            L.append("    for (int k = 0; k < m->n; ++k) {")
            L.append("        double i, g, ion[CS_NION] = {0, 0, 0};")
            L.append("        int c = m->node[k];")
            L.append("        _current_onem(m, k, &i, &g, ion, memo);")
            L.append("        m->i[c] += m->weight[k] * i; /* [nA] */")
            L.append("        m->g[c] += m->weight[k] * g; /* [uS] */")
            for ion in sorted(set(self.written_ions())):
                L.append("        m->ion_i[%s][c] += ion[%s]; /* [mA/cm2] */" % (ION_ENUM[ion], ION_ENUM[ion]))
            L.append("    }")
            L.append("}")
            L.append("static void _advance(const cs_mech_view *m) {")
            L += memo
            L.append("    for (int k = 0; k < m->n; ++k) _advance_onem(m, k, memo);")
            L.append("}")
        recv = "NULL"
        if m.net_receive and not nmodl_events.host_only(m):
            L.append("static void _receive(const cs_mech_view *m, int k, double w) { _receive_one(m, k, w); }")
            recv = "_receive"
        fold = self.fold_code()
        if fold:
            L += fold
        gpu = "NULL"
        if cuda and not self.builtin and not nmodl_events.host_only(m):
            L.append("extern const cs_mech_gpu_ops cs__gpu_%s;" % c)
            gpu = "&cs__gpu_%s" % c
        L.append("const cs_mech_type %s%s = {\"%s\", %s, %d, %d, _params, %d, _states, _init, %s, "
                 "%s, %s, %s, %s, %s, %s, %d, %s, %s%s};" % (
                     "cs_mech_" if self.builtin else "cs__nmodl_", c, self.name, "CS_MECH_POINT" if m.point else "CS_MECH_DENSITY", 1 if m.net_receive else 0,
                     len(self.params), len(self.states), "NULL" if m.artificial else "_current",
                     "NULL" if m.artificial else "_advance", recv, "_fold" if fold else "NULL", self.ions_mask("read"),
                     self.ions_mask("write"), gpu,
                     self.nstate_true, self.ions_mask("conc_read"), self.ions_mask("conc_write"),
                     nmodl_events.type_fields(self) + ", .advance_ion_free = %d, .linear = %d" % (
                         getattr(self, "advance_ion_free", 0), 1 if nmodl_linear.is_linear(m) else 0)))
        return "\n".join(L) + "\n"

    def cu_file(self):
        """The type's CUDA file (nmodl_cuda.mechanism_cu)."""
        return nmodl_cuda.mechanism_cu(self)

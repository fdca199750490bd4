"""Gaussian elimination generated for a linear system's nonzeros: the KINETIC schemes' solve
(nmodl_codegen.Gen.kinetic_code). Generated C; the loops it stands for are cs_nmodl_rt.h's."""


def sparse_solve(n, nz, pad, last=()):
    """Solve _M·x = _x in place (_x becomes x) by Gaussian elimination unrolled over the structural
    nonzeros nz {(row, col)} of _M and their fill-in, every index a constant (the matrix then lives
    in registers, not in local memory: with cs_nmodl_solve's loops a KINETIC scheme of 12 states
    took ~50 us a step on an H100). The unknowns are eliminated in their order, the rows of last
    (CONSERVE rows) after all others; each pivot is the diagonal entry. A kinetic scheme's
    backward-Euler matrix is diagonally dominant by columns, so no row swap is needed among the
    other rows, which is checked at each column; a CONSERVE row (all ones) is never a pivot before
    its turn: with partial pivoting it won at every step of NaV's scheme (column 6, at every v) and
    sent the solve back to the loops. Where a check fails, the system as it stands (in the
    elimination's order) continues in cs_nmodl_solve_from with partial pivoting from that column.
    Without CONSERVE rows (and checks that pass) this is cs_nmodl_solve's arithmetic, bit for bit,
    on the CPU; on the GPU each pivot's reciprocal is taken once and multiplies (cs_nmodl_divp)."""
    nz = set(nz)
    order = [i for i in range(n) if i not in last] + sorted(set(last))
    L = [pad + "int _from = -1; /* the elimination's position where a row swap is needed, -1: none */",
         pad + "do {"]
    for pos, c in enumerate(order):
        later = order[pos + 1:]
        below = [r for r in later if (r, c) in nz]
        checked = [r for r in below if r not in last]
        if checked:
            L.append(pad + "    if (%s) { _from = %d; break; }" % (
                " || ".join("fabs(_M[%d][%d]) > fabs(_M[%d][%d])" % (r, c, c, c) for r in checked), pos))
        right = [k for k in later if (c, k) in nz]
        L.append(pad + "    const double _p%d = cs_nmodl_pivot(_M[%d][%d]);" % (c, c, c))
        for r in below:
            ops = ["_M[%d][%d] -= _f * _M[%d][%d];" % (r, k, c, k) for k in right]
            nz |= {(r, k) for k in right}
            L.append(pad + "    { const double _f = cs_nmodl_divp(_M[%d][%d], _p%d);" % (r, c, c))
            L.append(pad + "      if (_f != 0.0) { %s _x[%d] -= _f * _x[%d]; } }" % (" ".join(ops), r, c))
    for pos in range(n - 1, -1, -1):
        c = order[pos]
        terms = " ".join("_s -= _M[%d][%d] * _x[%d];" % (c, k, k) for k in order[pos + 1:] if (c, k) in nz)
        L.append(pad + "    { double _s = _x[%d]; %s _x[%d] = cs_nmodl_divp(_s, _p%d); }" % (c, terms, c, c))
    L += [pad + "} while (0);",
          pad + "if (_from >= 0) { /* a row swap: the loops, with pivoting, from that position */",
          pad + "    double _F[%d][%d], _y[%d];" % (n, n, n)]
    L += [pad + "    _F[%d][%d] = %s;" % (a, b, "_M[%d][%d]" % (order[a], order[b]) if (order[a], order[b]) in nz else "0.0")
          for a in range(n) for b in range(n)]
    L += [pad + "    _y[%d] = _x[%d];" % (a, order[a]) for a in range(n)]
    L += [pad + "    cs_nmodl_solve_from(%d, &_F[0][0], _y, _from);" % n]
    L += [pad + "    _x[%d] = _y[%d];" % (order[a], a) for a in range(n)]
    L += [pad + "}"]
    return L

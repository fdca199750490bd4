#!/usr/bin/python3
"""The KINETIC solve unrolled over a scheme's nonzeros (nmodl_sparse.sparse_solve):
1. without CONSERVE rows it gives cs_nmodl_solve's results bit for bit, on random matrices of
   several patterns (NaV's scheme, a chain, random sparse ones), diagonally dominant ones (no row
   swap: the unrolled path alone) and ones that need row swaps (handed over to
   cs_nmodl_solve_from);
2. with NaV's CONSERVE row eliminated last, on backward-Euler matrices of NaV's scheme with random
   rates (1e-3 to 20 /ms, dt 0.025 ms): no hand-over, the same bits as a dense elimination in the
   same order (the loops), and residuals |A·x - b| below 1e-13; on random values, the same bits as
   that dense elimination with its hand-over rule.
Compiles C drivers with $CC (default cc).

Usage: test_nmodl_sparse_solve.py --cablesim PATH --source-dir DIR --work-dir DIR
"""
import os
import random
import shutil
import subprocess
import sys

from checks import Tally, arguments


def pattern_nav():
    """NaV.mod's 12 states: C1..C5, O (0-5), I6 (6), I1..I5 (7-11); the CONSERVE row replaces I6's."""
    links = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (7, 8), (8, 9), (9, 10), (10, 11), (11, 6)]
    links += [(0, 7), (1, 8), (2, 9), (3, 10), (4, 11)]
    nz = {(i, i) for i in range(12)}
    for a, b in links:
        nz |= {(a, b), (b, a)}
    nz = {(i, j) for i, j in nz if i != 6} | {(6, j) for j in range(12)}
    return 12, nz


def pattern_chain(n):
    return n, {(i, j) for i in range(n) for j in range(n) if abs(i - j) <= 1}


def pattern_random(n, p, seed):
    rng = random.Random(seed)
    return n, {(i, i) for i in range(n)} | {(i, j) for i in range(n) for j in range(n) if rng.random() < p}


def driver(n, nz, code, trials, dominant, seed):
    fill = []
    for i in range(n):
        for j in range(n):
            if (i, j) in nz:
                big = "(%s)" % ("4.0 + 8.0 * u()" if i == j and dominant else "u()")
                fill.append("A[%d][%d] = _M[%d][%d] = %s * (u() < 0.5 ? -1 : 1);" % (i, j, i, j, big))
            else:
                fill.append("A[%d][%d] = _M[%d][%d] = 0.0;" % (i, j, i, j))
    return """#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cs_nmodl_rt.h"
static unsigned long long s = %dull;
static double u(void) { s = s * 6364136223846793005ull + 1442695040888963407ull; return (double)(s >> 11) / 9007199254740992.0; }
int main(void) {
    int same = 0, handed = 0;
    for (int t = 0; t < %d; ++t) {
        double A[%d][%d], _M[%d][%d], b[%d], _x[%d];
        %s
        for (int i = 0; i < %d; ++i) b[i] = _x[i] = u() - 0.5;
        cs_nmodl_solve(%d, &A[0][0], b);
%s
        handed += _from >= 0;
        same += memcmp(b, _x, sizeof b) == 0;
    }
    printf("%%d %%d\\n", same, handed);
    return 0;
}
""" % (seed, trials, n, n, n, n, n, n, "\n        ".join(fill), n, n, "\n".join("        " + l for l in code))


NAV_LINKS = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (7, 8), (8, 9), (9, 10), (10, 11), (11, 6),
             (0, 7), (1, 8), (2, 9), (3, 10), (4, 11)]


def driver_conserve(n, nz, code, trials, kinetic, seed, conserve):
    """A dense reference of the same order (conserve rows last; a swap only where another row
    dominates, then the loops from there) against the unrolled code; kinetic: I - dt*Q with random
    rates on NaV's links and the conserve row all ones, else random values on the pattern."""
    order = [i for i in range(n) if i != conserve] + [conserve]
    if kinetic:
        fill = ["double Q[%d][%d] = {{0}};" % (n, n)]
        for a_, b_ in NAV_LINKS:
            fill.append("{ double kf = exp(9.9 * u() - 6.9), kb = exp(9.9 * u() - 6.9); Q[%d][%d] -= kf; Q[%d][%d] += kf; "
                        "Q[%d][%d] -= kb; Q[%d][%d] += kb; }" % (a_, a_, b_, a_, b_, b_, a_, b_))
        fill.append("for (int i = 0; i < %d; ++i) for (int j = 0; j < %d; ++j) A[i][j] = _M[i][j] = (i == j) - 0.025 * Q[i][j];" % (n, n))
        fill.append("for (int j = 0; j < %d; ++j) A[%d][j] = _M[%d][j] = 1.0;" % (n, conserve, conserve))
    else:
        fill = ["A[%d][%d] = _M[%d][%d] = %s;" % (i, j, i, j, "(u() - 0.5)" if (i, j) in nz else "0.0")
                for i in range(n) for j in range(n)]
    return """#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cs_nmodl_rt.h"
static unsigned long long s = %dull;
static double u(void) { s = s * 6364136223846793005ull + 1442695040888963407ull; return (double)(s >> 11) / 9007199254740992.0; }
static const int order[%d] = {%s};
static void reference(double (*A)[%d], const double *b, double *x) {
    enum { n = %d };
    double P[n][n], y[n];
    for (int i = 0; i < n; ++i) {
        y[i] = b[order[i]];
        for (int j = 0; j < n; ++j) P[i][j] = A[order[i]][order[j]];
    }
    int c = 0;
    for (; c < n; ++c) {
        int swap = 0;
        for (int r = c + 1; r < n - 1; ++r) swap |= fabs(P[r][c]) > fabs(P[c][c]); /* the last row: the conserve one */
        if (swap) break;
        for (int r = c + 1; r < n; ++r) {
            double f = P[r][c] / P[c][c];
            if (f == 0.0) continue;
            for (int k = c; k < n; ++k) P[r][k] -= f * P[c][k];
            y[r] -= f * y[c];
        }
    }
    if (c < n) cs_nmodl_solve_from(n, &P[0][0], y, c);
    else
        for (int r = n - 1; r >= 0; --r) {
            double t = y[r];
            for (int k = r + 1; k < n; ++k) t -= P[r][k] * y[k];
            y[r] = t / P[r][r];
        }
    for (int i = 0; i < n; ++i) x[order[i]] = y[i];
}
int main(void) {
    int same = 0, handed = 0;
    double worst = 0;
    for (int t = 0; t < %d; ++t) {
        double A[%d][%d], _M[%d][%d], b[%d], ref[%d], _x[%d];
        %s
        for (int i = 0; i < %d; ++i) b[i] = _x[i] = u();
        b[%d] = _x[%d] = 1.0;
        reference(A, b, ref);
%s
        handed += _from >= 0;
        same += memcmp(ref, _x, sizeof ref) == 0;
        for (int i = 0; i < %d; ++i) {
            double r = -b[i];
            for (int j = 0; j < %d; ++j) r += A[i][j] * _x[j];
            if (fabs(r) > worst) worst = fabs(r);
        }
    }
    printf("%%d %%d %%.3g\\n", same, handed, worst);
    return 0;
}
""" % (seed, n, ", ".join(map(str, order)), n, n, trials, n, n, n, n, n, n, n, "\n        ".join(fill), n,
       conserve, conserve, "\n".join("        " + l for l in code), n, n)


def main():
    a = arguments()
    sys.path.insert(0, os.path.join(a.source_dir, "nmodl"))
    from nmodl_sparse import sparse_solve
    work = a.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cc = os.environ.get("CC", "cc")
    t = Tally()
    cases = [("NaV's scheme", pattern_nav()), ("a chain of 7", pattern_chain(7)),
             ("random 9, 30 %", pattern_random(9, 0.3, 1)), ("random 16, 15 %", pattern_random(16, 0.15, 2))]
    trials = 2000
    for k, (name, (n, nz)) in enumerate(cases):
        code = sparse_solve(n, nz, "")
        for dominant in (True, False):
            src = os.path.join(work, "d%d%d.c" % (k, dominant))
            exe = src[:-2]
            with open(src, "w") as f:
                f.write(driver(n, nz, code, trials, dominant, 1000 + k))
            r = subprocess.run([cc, "-std=c11", "-O2", "-I", os.path.join(a.source_dir, "nmodl"), src, "-o", exe, "-lm"],
                               capture_output=True, text=True)
            if r.returncode:
                t(False, "%s: the driver compiles (%s)" % (name, r.stderr.strip().splitlines()[0]))
                continue
            same, handed = map(int, subprocess.run([exe], capture_output=True, text=True).stdout.split())
            kind = "dominant pivots" if dominant else "random pivots"
            t(same == trials, "%s, %s: %d of %d solutions bit for bit cs_nmodl_solve's" % (name, kind, same, trials))
            if dominant and name != "NaV's scheme":  # NaV's CONSERVE row (all ones) may dominate a pivot
                t(handed == 0, "%s, %s: no hand-over to the loops (%d)" % (name, kind, handed))
            if not dominant:
                t(handed > 0, "%s, %s: solves that need row swaps are handed over (%d of %d)" % (
                    name, kind, handed, trials))
    # 2. NaV's scheme with its CONSERVE row (6: I6's) eliminated last
    n, nz = pattern_nav()
    code = sparse_solve(n, nz, "", last=[6])
    for k, kinetic in enumerate((True, False)):
        src = os.path.join(work, "c%d.c" % k)
        exe = src[:-2]
        with open(src, "w") as f:
            f.write(driver_conserve(n, nz, code, trials, kinetic, 2000 + k, 6))
        r = subprocess.run([cc, "-std=c11", "-O2", "-I", os.path.join(a.source_dir, "nmodl"), src, "-o", exe, "-lm"],
                           capture_output=True, text=True)
        if r.returncode:
            t(False, "CONSERVE driver compiles (%s)" % r.stderr.strip().splitlines()[0])
            continue
        out = subprocess.run([exe], capture_output=True, text=True).stdout.split()
        same, handed, worst = int(out[0]), int(out[1]), float(out[2])
        kind = "backward-Euler matrices" if kinetic else "random values"
        t(same == trials, "NaV's scheme, CONSERVE row last, %s: %d of %d bit for bit the dense elimination in the same order" % (
            kind, same, trials))
        if kinetic:
            t(handed == 0, "NaV's scheme, CONSERVE row last, %s: no hand-over to the loops (%d)" % (kind, handed))
            t(worst < 1e-13, "NaV's scheme, CONSERVE row last, %s: largest residual %.3g < 1e-13" % (kind, worst))
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The KINETIC solve unrolled over a scheme's nonzeros (nmodl_codegen.sparse_solve) gives
cs_nmodl_solve's results bit for bit: on random matrices of several patterns (a kinetic chain with
cross links and a CONSERVE row, as NaV's; a tridiagonal chain; random sparse ones), diagonally
dominant ones (no row swap: the unrolled path alone) and ones that need row swaps (the unrolled
path hands over to cs_nmodl_solve_from). Compiles a C driver with $CC (default cc).

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


def main():
    a = arguments()
    sys.path.insert(0, os.path.join(a.source_dir, "nmodl"))
    from nmodl_codegen import sparse_solve
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
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())

/* cablesim batched solvers: standalone public API (no dependency on the simulator).
 *
 * A batch holds many independent systems. Callers always see systems in tree order
 * (Hines) or row order (Thomas); a variant with its own internal layout converts at set-up.
 *
 * Hines system (a symmetric tree matrix), rows r in [offset[s], offset[s+1]) for system s:
 *     d[r]·x[r] + u[r]·x[p[r]] + Σ_{children c of r} u[c]·x[c] = rhs[r]
 * where p[r] is the global row of r's parent, p[r] < r, and p[first row of a system] = -1.
 * The solution overwrites rhs; d is used as workspace and overwritten.
 *
 * Thomas system of size n (row-major per system, "Flat"): rows i of system s at s*n + i:
 *     a[i]·x[i-1] + b[i]·x[i] + c[i]·x[i+1] = d[i]      (a[0] and c[n-1] ignored)
 * The solution overwrites d; b (and c) may be used as workspace as stated per function. */
#ifndef CS_SOLVER_H
#define CS_SOLVER_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CS_SOLVER_OK = 0,
    CS_SOLVER_ERR_INVALID = -1,     /* a bad argument: sizes, a parent after its child, ... */
    CS_SOLVER_ERR_SINGULAR = -2,    /* a zero pivot */
    CS_SOLVER_ERR_NOMEM = -3,
    CS_SOLVER_ERR_DEVICE = -4,      /* a CUDA error */
    CS_SOLVER_ERR_UNAVAILABLE = -5  /* the variant is not compiled in or needs a GPU */
} cs_solver_status;

const char *cs_solver_status_string(cs_solver_status s);

/* ---- CPU Hines (tree) batch --------------------------------------------------------- */
/* Serial reference. */
cs_solver_status cs_hines_solve_serial(int nsys, const int *offset, const int *p,
                                       double *d, const double *u, double *rhs);
/* OpenMP across systems (schedule by rows). */
cs_solver_status cs_hines_solve_omp(int nsys, const int *offset, const int *p,
                                    double *d, const double *u, double *rhs);

/* Serial, several systems' sweeps interleaved for instruction-level parallelism; d is
 * overwritten with 1/(eliminated d). Equal to the serial solve up to rounding. The simulator's
 * CPU backend uses this one. */
cs_solver_status cs_hines_solve_ilp(int nsys, const int *offset, const int *p,
                                    double *d, const double *u, double *rhs);

/* For a time-stepping caller whose next system is d = d0, rhs = c·x + b0 (plus sparse terms it
 * adds itself): the forward sweep writes them as soon as each row's solution x is known, which
 * saves the caller a pass over every row. rhs is the buffer the next system goes to (it must
 * not alias the solve's rhs). */
typedef struct {
    const double *d0, *c, *b0; /* [rows] */
    double *rhs;               /* [rows] out */
} cs_hines_next;
/* cs_hines_solve_ilp, then d[r] = d0[r] and next->rhs[r] = c[r]·x[r] + b0[r] for every row.
 * Checks only O(nsys) of the structure: check p once with cs_hines_check_structure. */
cs_solver_status cs_hines_solve_ilp_next(int nsys, const int *offset, const int *p, double *d,
                                         const double *u, double *rhs, const cs_hines_next *next);
/* Full structure check (offsets increasing, p[first] = -1, first <= p[r] < r): O(rows). */
cs_solver_status cs_hines_check_structure(int nsys, const int *offset, const int *p);

/* ---- CPU Thomas (tridiagonal) batch ------------------------------------------------- */
/* Serial reference: nsys systems of size n, Flat layout. b and c are overwritten. */
cs_solver_status cs_thomas_solve_serial(int nsys, int n, const double *a, double *b, double *c,
                                        double *d);
cs_solver_status cs_thomas_solve_omp(int nsys, int n, const double *a, double *b, double *c,
                                     double *d);
/* One large system (or a few) over all OpenMP threads: the chunked hybrid (Thomas inside chunks
 * of `chunk` rows, serial Thomas on the 2 end rows of every chunk, substitution back;
 * solver/cs_thomas_chunked_cpu.c). The batch counts as one system of nsys·n rows whose
 * couplings across system boundaries are zero. chunk = 0 picks max(256, ceil(nsys·n/4096));
 * chunk = 1 is invalid. b and c are overwritten; needs O(nsys·n/chunk) temporary memory
 * (CS_SOLVER_ERR_NOMEM). Equal to cs_thomas_solve_serial up to rounding (for diagonally
 * dominant systems within a few ulps times the condition number). */
cs_solver_status cs_thomas_solve_chunked_omp(int nsys, int n, int chunk, const double *a,
                                             double *b, double *c, double *d);
/* The same system as scans (seed 002; solver/cs_thomas_scan_cpu.c): the pivots from an
 * inclusive scan of 2×2 matrix products, both substitutions as scans of affine maps, each over
 * one block of rows per OpenMP thread (reduce, then scan). b is overwritten with the pivots; c is
 * read only. The result depends on the thread count through the block prefixes only (rounding). */
cs_solver_status cs_thomas_solve_scan_omp(int nsys, int n, const double *a, double *b, double *c,
                                          double *d);

/* Host emulation of the GPU chunked variant (warp-chunked hybrid; solver/cs_thomas_warp_emul.c):
 * lanes of k rows, warps of 32 lanes combined in a tree; a level of at most `base` rows is
 * reduced once more and its warps' rows solved by PCR (the GPU's one-block base kernel), except
 * that a reduced level (not the first) of at most `pcr` rows is solved whole by PCR (the GPU's
 * PCR base kernel; 0: never); the GPU uses k = 16, base = 4096, pcr = 1024. a, b, c are not
 * written; d becomes the solution. For the tests: not meant to be fast. */
cs_solver_status cs_thomas_solve_warp_emul(int nsys, int n, int k, int base, int pcr,
                                           const double *a, const double *b, const double *c,
                                           double *d);

/* ---- CPU block-tridiagonal batch ---------------------------------------------------- */
/* nsys systems of nb block rows with k×k blocks (1 <= k <= 4), for block row i of a system:
 *     A[i]·x[i-1] + B[i]·x[i] + C[i]·x[i+1] = d[i]      (x[i], d[i] in R^k; A[0], C[nb-1] unread)
 * Flat layout: block (s, i) at (s·nb + i)·k·k, row-major inside the block; vector (s, i) at
 * (s·nb + i)·k. Block Thomas, each pivot block B[i] - A[i]·C'[i-1] factorised by LU with partial
 * pivoting inside the block (so a block with a zero leading entry is fine; a singular pivot block
 * gives CS_SOLVER_ERR_SINGULAR). A and B are read only, C is overwritten with C' = M^-1·C, d with
 * the solution. Stable for block diagonally dominant systems, like Thomas; the tests compare it
 * with LAPACK's banded solver dgbsv (partial pivoting over the whole band). */
cs_solver_status cs_block_thomas_solve_serial(int k, int nsys, int nb, const double *A,
                                              const double *B, double *C, double *d);
/* OpenMP across systems: the same per-system routine, bit-identical to the serial one. */
cs_solver_status cs_block_thomas_solve_omp(int k, int nsys, int nb, const double *A,
                                           const double *B, double *C, double *d);
/* One large block-tridiagonal system, or a few (the batch counts as one system of nsys·nb block
 * rows, cut at the system boundaries): the chunked hybrid (solver/cs_block_chunked_cpu.c;
 * chunks of 16 block rows, block Thomas inside, the chunks' end rows a smaller block system
 * solved the same way down to 64 rows, then substitution), OpenMP over chunks. The reference of
 * the GPU's cs_block_thomas_gpu_chunked_d. Same arguments and results as the serial solve
 * (C overwritten, d the solution; a singular pivot block gives CS_SOLVER_ERR_SINGULAR). */
cs_solver_status cs_block_thomas_solve_chunked_omp(int k, int nsys, int nb, const double *A,
                                                   const double *B, double *C, double *d);

#ifdef __cplusplus
}
#endif
#endif

/* cablesim GPU batched block-tridiagonal solvers (k×k blocks, k = 1..4), double: standalone
 * public API, callable from C without CUDA headers. Without CUDA every solve answers
 * CS_SOLVER_ERR_UNAVAILABLE (solver/cs_block_thomas_gpu_stub.c).
 *
 * The systems are those of cs_block_thomas_solve_serial (cs_solver.h): nsys systems of nb block
 * rows, A[i]·x[i-1] + B[i]·x[i] + C[i]·x[i+1] = d[i]. Layouts (element e = r·k + c of block row i
 * of system s; vector entry r):
 *     Flat              block at (s·nb + i)·k·k + e,     vector at (s·nb + i)·k + r
 *     Full-Interleaved  block at (i·k·k + e)·nsys + s,   vector at (i·k + r)·nsys + s
 * Flat is the CPU solvers' layout; converting it is a transpose of an nsys × (nb·k·k) (or
 * nsys × (nb·k)) matrix: cs_thomas_gpu_flat_to_interleaved_d(nsys, nb·k·k, src, dst).
 *
 * Variants (X-macro): one thread per system, block Thomas as on the CPU (the same arithmetic:
 * solver/cs_block_small.h, pivot blocks by LU with partial pivoting inside the block):
 *   flat          Flat layout (neighbouring threads 8·nb·k·k bytes apart: the seeds' baseline)
 *   interleaved   Full-Interleaved (neighbouring threads at neighbouring addresses: coalesced)
 * A and B are read only, C is overwritten with C', d with the solution. A singular pivot block
 * fills that system's solution with NaN (at no cost to a regular solve); with host pointers the
 * copied solution is checked and a NaN gives CS_SOLVER_ERR_SINGULAR (d still holds it); with
 * device pointers the caller checks (inf/NaN in d).
 * Memory: as cs_thomas_gpu.h (CS_THOMAS_GPU_HOST_PTRS: copied in and out, synchronous;
 * CS_THOMAS_GPU_DEVICE_PTRS: asynchronous on the default stream). Errors: CS_SOLVER_ERR_INVALID
 * for bad arguments (k outside 1..4, nsys < 0, nb < 1, NULL arrays), CS_SOLVER_ERR_DEVICE or
 * _NOMEM from CUDA; cs_thomas_gpu_last_error() gives the one-line message. */
#ifndef CS_BLOCK_THOMAS_GPU_H
#define CS_BLOCK_THOMAS_GPU_H

#include "cs_solver.h"
#include "cs_thomas_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(enum name, variant name, layout) */
#define CS_BLOCK_GPU_VARIANT_LIST(X)                                    \
    X(CS_BLOCK_GPU_FLAT, "flat", CS_THOMAS_LAYOUT_FLAT)                 \
    X(CS_BLOCK_GPU_INTERLEAVED, "interleaved", CS_THOMAS_LAYOUT_INTERLEAVED)

typedef enum {
#define CS__BLOCK_GPU_ENUM(e, name, layout) e,
    CS_BLOCK_GPU_VARIANT_LIST(CS__BLOCK_GPU_ENUM)
#undef CS__BLOCK_GPU_ENUM
    CS_BLOCK_GPU_NVARIANTS
} cs_block_gpu_variant;

/* "flat", "interleaved"; NULL out of range. */
const char *cs_block_gpu_variant_name(cs_block_gpu_variant v);

cs_solver_status cs_block_thomas_gpu_solve_d(cs_block_gpu_variant v, int k, int nsys, int nb,
                                             const double *A, const double *B, double *C,
                                             double *d, cs_thomas_gpu_mem mem);

/* One large block system, or a few (Flat layout; the batch is one system of nsys·nb block rows
 * cut at the system boundaries): the chunked hybrid of cs_block_thomas_solve_chunked_omp
 * (solver/cs_block_large_gpu.cu: chunks of 16 block rows, the chunks' end rows solved the same
 * way down to 64 rows, then substitution; the rows staged through shared memory a warp at a
 * time). A and B are read only, d is overwritten with the solution; C is workspace (its contents
 * afterwards are unspecified: partly C'). A singular pivot block sets a flag in the workspace and
 * a last kernel fills all of d with NaN.
 *
 * cs_block_thomas_gpu_chunked_d: memory modes and errors as cs_block_thomas_gpu_solve_d; the
 * call allocates and frees its workspace, so it is synchronous with device pointers too; a
 * singular pivot block gives CS_SOLVER_ERR_SINGULAR with host and with device pointers. */
cs_solver_status cs_block_thomas_gpu_chunked_d(int k, int nsys, int nb, const double *A,
                                               const double *B, double *C, double *d,
                                               cs_thomas_gpu_mem mem);
/* Bytes of workspace the caller-workspace call needs (0 for k outside 1..4, nsys <= 0 or
 * nb <= 0): the reduced levels, ~1.15·(3k² + k)·N bytes for N = nsys·nb block rows (about
 * 1/8 of the inputs), plus 16. */
size_t cs_block_thomas_gpu_chunked_workspace(int k, int nsys, int nb);
/* The same solve on device pointers with the caller's workspace (device memory, >= the bytes
 * above, 16-byte aligned: any cs_thomas_gpu_malloc'd pointer), asynchronous on `stream` (a
 * cudaStream_t; NULL = the default stream). Nothing is allocated; calls on several streams may
 * run at once, each with its own workspace. A singular pivot block is not reported by the call
 * (it only queues work): d is all NaN afterwards, which the caller checks. Errors:
 * CS_SOLVER_ERR_INVALID for bad arguments or a too small or misaligned workspace, _DEVICE for a
 * failed launch. */
cs_solver_status cs_block_thomas_gpu_chunked_ws_d(int k, int nsys, int nb, const double *A,
                                                  const double *B, double *C, double *d,
                                                  void *work, size_t work_bytes, void *stream);

#ifdef __cplusplus
}
#endif
#endif

/* cablesim GPU batched Thomas (tridiagonal) solvers, double and float: standalone public API.
 *
 * Callable from C: no CUDA header is needed. When the library is built without CUDA every
 * function below exists and returns CS_SOLVER_ERR_UNAVAILABLE (solver/cs_thomas_gpu_stub.c).
 *
 * The systems (cs_solver.h), for s in [0, nsys) and i in [0, n):
 *     a[i]·x[i-1] + b[i]·x[i] + c[i]·x[i+1] = d[i]        (a[0] and c[n-1] are never read)
 * Layouts (element i of system s):
 *     Flat              at s·n + i          (cs_solver.h's layout, the CPU solvers' layout)
 *     Full-Interleaved  at i·nsys + s       (neighbouring systems at neighbouring addresses)
 * A variable-size batch (system s has n_s = offset[s+1] - offset[s] rows, 0 <= n_s <= n_max)
 * is stored Full-Interleaved and padded to n_max rows: element i of system s at i·nsys + s.
 * cs_thomas_gpu_var_pack_* builds that padded layout from the packed Flat one (system s at rows
 * offset[s] .. offset[s+1]-1) and fills the padding with identity rows (a = c = d = 0, b = 1;
 * it also zeroes a[0] and c[n_s-1] of each system), which "var_cp" needs and "var_ncp" ignores.
 *
 * Variants (X-macro below). Each reads its data in one layout; convert once at set-up with the
 * helpers below, never per step:
 *   auto         Flat. Picks a concrete variant from (nsys, n, precision): cs_thomas_gpu_choose
 *                (warp or warp_staged up to 1024 rows; chunked above).
 *   flat         Flat; one thread per system (uncoalesced: the baseline of the seeds).
 *   interleaved  Full-Interleaved; one thread per system (cuThomasBatch: coalesced).
 *   warp         Flat; n <= 2048; warp-cooperative hybrid: a group of G lanes of a warp per system
 *                (G = 32, or 4, 8, 16 for n <= 16·G when the batch still fills the GPU). Lane l of
 *                the group holds rows [l·K, l·K+K) (K = ceil(n/G) rounded up to 1,2,4,8,12,16,
 *                24,32,64; at 64 partly spilled to local memory) in registers, loaded with
 *                16-byte vector loads; Thomas-like elimination
 *                inside the chunk leaves one coupled row per lane, a G-row tridiagonal system over
 *                the lanes is solved by PCR with __shfl (log2 G steps), and back substitution
 *                inside the chunk. Reads a, b, c, d once and writes d once.
 *   warp_staged  As warp, but each group first copies its system into shared memory with
 *                asynchronous 16-byte copies (cp.async), and writes the solution back through it.
 *   var_cp       Variable-size batch, padded interleaved; Computing Padding: every thread runs all
 *                n_max rows (the identity padding rows decouple); offset is not read.
 *   var_ncp      Variable-size batch, padded interleaved; No Computing Padding: thread s stops at
 *                its own n_s (reads offset).
 *   chunked      Flat; any n (meant for n > 1024: one large system, or a few). The batch is one
 *                system of nsys·n rows cut into chunks of 16 rows per thread: Thomas inside each
 *                chunk, a reduced system of the chunks' first and last rows (1/8 of the rows)
 *                solved by the same method recursively down to 1024 rows (PCR in one block),
 *                then each chunk's interior from its two ends. Reads a, b, c, d twice and
 *                writes d once (~9 arrays of traffic); needs a workspace of ~0.6 of one array
 *                (cs_thomas_gpu_chunked_workspace): through this call the library keeps one,
 *                grown on demand (cs_thomas_gpu_release_workspace frees it); the explicit call
 *                cs_thomas_gpu_chunked_d/_f takes the caller's workspace and a stream.
 *   scan         Flat; any n. The solve as three scans (seed 002, the PMPH tridag project): the
 *                pivots from an inclusive scan of 2×2 matrix products, both substitutions as
 *                scans of affine maps (CUB's DeviceScan). About 12 arrays of traffic; a second
 *                formulation to compare with chunked, not a faster one. Workspace: 2 arrays plus
 *                CUB's storage (cs_thomas_gpu_scan_workspace), as chunked (library-owned in the
 *                variant call, the caller's in cs_thomas_gpu_scan_d/_f).
 *
 * Workspace and overwrites: a and c are read only. d is overwritten with the solution. b is
 * workspace: after a call with device pointers its contents are unspecified (the one-thread
 * variants store c'[i] there; the warp and chunked variants leave it unchanged, but callers must
 * not rely on that). No other memory is used (with host pointers, temporary device copies are
 * made), except chunked's and scan's workspace (above).
 *
 * Memory: mem = CS_THOMAS_GPU_DEVICE_PTRS: every array is a device pointer; the call is
 * asynchronous on the default stream (errors in the kernel's execution surface at the next
 * call or at cs_thomas_gpu_synchronize). mem = CS_THOMAS_GPU_HOST_PTRS: host arrays are copied to
 * temporary device buffers, solved, and d (only) is copied back; the call is synchronous and b
 * is left unchanged. 16-byte aligned device arrays (any cudaMalloc'd pointer) get vector loads.
 *
 * Numerics: no pivoting (as the CPU Thomas solvers); meant for diagonally dominant systems
 * (the cable equation's are). A zero pivot leaves inf/NaN in d: with host pointers the copied
 * solution is checked and a non-finite one gives CS_SOLVER_ERR_SINGULAR (d still holds it); with
 * device pointers there is no check. Float variants compute in float.
 *
 * Errors: CS_SOLVER_ERR_INVALID for bad arguments (nsys < 0, n < 1, a NULL array with nsys > 0,
 * a variable-size variant in the uniform call or the reverse, warp with n > 2048);
 * CS_SOLVER_ERR_DEVICE for a failing CUDA call; CS_SOLVER_ERR_NOMEM when a device allocation
 * fails; CS_SOLVER_ERR_SINGULAR for a non-finite solution with host pointers. cs_thomas_gpu_last_error() then gives a one-line message (the CUDA error string and
 * the call's file:line). nsys == 0 is a no-op. */
#ifndef CS_THOMAS_GPU_H
#define CS_THOMAS_GPU_H

#include <stddef.h>

#include "cs_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CS_THOMAS_LAYOUT_FLAT = 0, CS_THOMAS_LAYOUT_INTERLEAVED = 1 } cs_thomas_layout;

/* X(enum name, variant name, layout, variable-size batch) */
#define CS_THOMAS_GPU_VARIANT_LIST(X)                                     \
    X(CS_THOMAS_GPU_AUTO, "auto", CS_THOMAS_LAYOUT_FLAT, 0)               \
    X(CS_THOMAS_GPU_FLAT, "flat", CS_THOMAS_LAYOUT_FLAT, 0)               \
    X(CS_THOMAS_GPU_INTERLEAVED, "interleaved", CS_THOMAS_LAYOUT_INTERLEAVED, 0) \
    X(CS_THOMAS_GPU_WARP, "warp", CS_THOMAS_LAYOUT_FLAT, 0)               \
    X(CS_THOMAS_GPU_WARP_STAGED, "warp_staged", CS_THOMAS_LAYOUT_FLAT, 0) \
    X(CS_THOMAS_GPU_VAR_CP, "var_cp", CS_THOMAS_LAYOUT_INTERLEAVED, 1)    \
    X(CS_THOMAS_GPU_VAR_NCP, "var_ncp", CS_THOMAS_LAYOUT_INTERLEAVED, 1)  \
    X(CS_THOMAS_GPU_CHUNKED, "chunked", CS_THOMAS_LAYOUT_FLAT, 0)        \
    X(CS_THOMAS_GPU_SCAN, "scan", CS_THOMAS_LAYOUT_FLAT, 0)

typedef enum {
#define CS__THOMAS_GPU_ENUM(e, name, layout, var) e,
    CS_THOMAS_GPU_VARIANT_LIST(CS__THOMAS_GPU_ENUM)
#undef CS__THOMAS_GPU_ENUM
    CS_THOMAS_GPU_NVARIANTS
} cs_thomas_gpu_variant;

typedef enum { CS_THOMAS_GPU_F64 = 0, CS_THOMAS_GPU_F32 = 1 } cs_thomas_gpu_precision;

typedef enum { CS_THOMAS_GPU_HOST_PTRS = 0, CS_THOMAS_GPU_DEVICE_PTRS = 1 } cs_thomas_gpu_mem;

/* The largest n of the warp variants. */
#define CS_THOMAS_GPU_WARP_MAX_N 2048

/* ---- variants (these work without CUDA too) ----------------------------------------- */
/* "flat", "warp", ...; NULL for a value out of range. */
const char *cs_thomas_gpu_variant_name(cs_thomas_gpu_variant v);
/* Look a variant up by name; CS_SOLVER_ERR_INVALID (and *v untouched) for an unknown name. */
cs_solver_status cs_thomas_gpu_variant_from_name(const char *name, cs_thomas_gpu_variant *v);
/* The layout the variant reads, and whether it is a variable-size (var_*) variant. */
cs_thomas_layout cs_thomas_gpu_variant_layout(cs_thomas_gpu_variant v);
int cs_thomas_gpu_variant_is_var(cs_thomas_gpu_variant v);
/* The concrete Flat-layout variant "auto" runs for this shape (never auto, never interleaved). */
cs_thomas_gpu_variant cs_thomas_gpu_choose(int nsys, int n, cs_thomas_gpu_precision prec);

/* ---- solves ------------------------------------------------------------------------- */
/* Uniform batch: nsys systems of n rows in the variant's layout (auto, flat, interleaved, warp,
 * warp_staged). */
cs_solver_status cs_thomas_gpu_solve_d(cs_thomas_gpu_variant v, int nsys, int n, const double *a,
                                       double *b, const double *c, double *d,
                                       cs_thomas_gpu_mem mem);
cs_solver_status cs_thomas_gpu_solve_f(cs_thomas_gpu_variant v, int nsys, int n, const float *a,
                                       float *b, const float *c, float *d,
                                       cs_thomas_gpu_mem mem);
/* Variable-size batch (var_cp, var_ncp; auto = var_cp): arrays of nsys·n_max elements, padded
 * Full-Interleaved (see the top); offset[nsys+1] in the same memory as the arrays (var_ncp reads
 * it, var_cp may get NULL). With host pointers, var_ncp checks 0 <= n_s <= n_max. */
cs_solver_status cs_thomas_gpu_solve_var_d(cs_thomas_gpu_variant v, int nsys, int n_max,
                                           const int *offset, const double *a, double *b,
                                           const double *c, double *d, cs_thomas_gpu_mem mem);
cs_solver_status cs_thomas_gpu_solve_var_f(cs_thomas_gpu_variant v, int nsys, int n_max,
                                           const int *offset, const float *a, float *b,
                                           const float *c, float *d, cs_thomas_gpu_mem mem);

/* ---- one large system (or a few): the chunked hybrid with the caller's workspace -------- */
/* Bytes of workspace chunked needs for nsys systems of n rows (0 up to 1024 rows in all). */
size_t cs_thomas_gpu_chunked_workspace(int nsys, int n, cs_thomas_gpu_precision prec);
/* chunked on device pointers (asynchronous on `stream`, a cudaStream_t; NULL = the default
 * stream), with work (device memory, >= cs_thomas_gpu_chunked_workspace bytes, 16-byte
 * aligned) as scratch. Nothing is allocated per call; calls on several streams may run at once,
 * each with its own workspace. */
cs_solver_status cs_thomas_gpu_chunked_d(int nsys, int n, const double *a, double *b,
                                         const double *c, double *d, void *work,
                                         size_t work_bytes, void *stream);
cs_solver_status cs_thomas_gpu_chunked_f(int nsys, int n, const float *a, float *b,
                                         const float *c, float *d, void *work,
                                         size_t work_bytes, void *stream);
/* scan, likewise: bytes of workspace (256-byte aligned: any cs_thomas_gpu_malloc'd pointer;
 * 0 when CUB cannot size its storage), and the solve on device pointers. */
size_t cs_thomas_gpu_scan_workspace(int nsys, int n, cs_thomas_gpu_precision prec);
cs_solver_status cs_thomas_gpu_scan_d(int nsys, int n, const double *a, double *b,
                                      const double *c, double *d, void *work, size_t work_bytes,
                                      void *stream);
cs_solver_status cs_thomas_gpu_scan_f(int nsys, int n, const float *a, float *b, const float *c,
                                      float *d, void *work, size_t work_bytes, void *stream);
/* Free the workspace the variant calls keep (chunked and scan through cs_thomas_gpu_solve_*). */
cs_solver_status cs_thomas_gpu_release_workspace(void);

/* ---- one system split over partitions, coupled by a bridge system ---------------------- */
/* Seed 004's multi-GPU hybrid on one GPU: the rows (nsys·n, as chunked) are split into `parts`
 * contiguous partitions, partition p running on streams[p] (each stream a stand-in for one
 * device). Each partition reduces its rows with chunked's kernels down to two bridge rows (its
 * first and last unknowns, coupled to its neighbours' last and first); the 2·parts bridge rows
 * are solved; each partition then substitutes back (solver/cs_thomas_bridge_gpu.cu).
 * sync = CS_THOMAS_BRIDGE_HOST: the host waits for every partition's reduction, solves the bridge
 * on the CPU and launches the substitutions (two kernels with the CPU between; the call returns
 * once the substitutions are queued). CS_THOMAS_BRIDGE_DEVICE: every stream waits for the others'
 * reductions through events and solves the bridge itself, no host round trip (the call only
 * queues work). Either way, wait on every stream before reading d; the inputs must be ready
 * before the call. Device pointers, double; a, c read only, b unchanged, d the solution.
 * Needs at least 2 rows per partition (else CS_SOLVER_ERR_INVALID); 1 <= parts <= 64. The
 * workspace belongs to the call until every stream has finished it. */
#define CS_THOMAS_BRIDGE_MAX_PARTS 64
typedef enum { CS_THOMAS_BRIDGE_HOST = 0, CS_THOMAS_BRIDGE_DEVICE = 1 } cs_thomas_bridge_sync;
/* Bytes of workspace (16-byte aligned; counted in double, so enough for float too); 0 when the
 * shape cannot be split into `parts`. */
size_t cs_thomas_gpu_bridge_workspace(int nsys, int n, int parts);
cs_solver_status cs_thomas_gpu_bridge_d(int nsys, int n, int parts, cs_thomas_bridge_sync sync,
                                        const double *a, double *b, const double *c, double *d,
                                        void *work, size_t work_bytes, void *const *streams);
/* float: the same (the host-driven bridge is solved in double on the host). */
cs_solver_status cs_thomas_gpu_bridge_f(int nsys, int n, int parts, cs_thomas_bridge_sync sync,
                                        const float *a, float *b, const float *c, float *d,
                                        void *work, size_t work_bytes, void *const *streams);

/* ---- one system over several devices: the bridge across GPUs --------------------------- */
/* The same algorithm with partition p held by device devices[p] (solver/cs_thomas_bridge_multi_gpu.cu):
 * the system's rows [r_p, r_p + rows[p]) are the caller's arrays a[p], b[p], c[p], d[p] (device
 * pointers on devices[p], any rows[p] >= 2; a[p][0] couples to the last row of partition p-1 and
 * c[p][rows[p]-1] to the first of p+1; a[0][0] and c[D-1][rows[D-1]-1] are not used), solved on
 * streams[p] (a cudaStream_t of devices[p]; one per partition, also when devices repeat) with
 * work[p] (device memory on devices[p], >= cs_thomas_gpu_bridge_multi_workspace(rows[p], parts)
 * bytes, 16-byte aligned: the caller owns one per partition, as with cs_thomas_gpu_bridge_d).
 * Each partition reduces on its own device to its two bridge rows; the bridge is solved
 *   CS_THOMAS_BRIDGE_HOST    on the host (each partition's 8 numbers copied down, solved in
 *                            double, its F and L copied back); the call returns once the
 *                            substitutions are queued;
 *   CS_THOMAS_BRIDGE_DEVICE  on devices[0]: the rows go there by cudaMemcpyPeerAsync, the other
 *                            streams wait for it by events across devices, no host round trip;
 *                            the call only queues work.
 * Peer access between devices[0] and the others is enabled on the first device-side call (once
 * per pair; "already enabled" is fine); where it is not available the driver stages the peer
 * copies through the host: cs_thomas_gpu_bridge_multi_peer says which. Devices may repeat
 * ({0, 0, 0, 0} on one GPU): the same answer. Wait on every stream before reading d; the current
 * device is unchanged. Errors as cs_thomas_gpu_bridge_d (a partition of < 2 rows, a device out of
 * range, a too small workspace: CS_SOLVER_ERR_INVALID; a non-finite bridge system with the
 * host-driven bridge: CS_SOLVER_ERR_SINGULAR; with the device-side one a zero pivot leaves inf/NaN
 * in d). 1 <= parts <= CS_THOMAS_BRIDGE_MAX_PARTS. */
/* Bytes of workspace of one partition of `rows` rows among `parts` (counted in double, so
 * enough for float); 0 for rows < 2 or parts out of range. */
size_t cs_thomas_gpu_bridge_multi_workspace(int rows, int parts);
/* Enables peer access between devices[0] and every other device (both ways) and sets *direct
 * = 1 when every bridge copy goes device to device, 0 when some go through the host. */
cs_solver_status cs_thomas_gpu_bridge_multi_peer(int parts, const int *devices, int *direct);
cs_solver_status cs_thomas_gpu_bridge_multi_d(int parts, const int *rows, const int *devices,
                                              cs_thomas_bridge_sync sync, const double *const *a,
                                              double *const *b, const double *const *c,
                                              double *const *d, void *const *work,
                                              const size_t *work_bytes, void *const *streams);
cs_solver_status cs_thomas_gpu_bridge_multi_f(int parts, const int *rows, const int *devices,
                                              cs_thomas_bridge_sync sync, const float *const *a,
                                              float *const *b, const float *const *c,
                                              float *const *d, void *const *work,
                                              const size_t *work_bytes, void *const *streams);

/* ---- set-up helpers: layout conversion on the device (device pointers, asynchronous) -- */
/* One array of nsys·n elements; src and dst must not overlap. */
cs_solver_status cs_thomas_gpu_flat_to_interleaved_d(int nsys, int n, const double *src,
                                                     double *dst);
cs_solver_status cs_thomas_gpu_interleaved_to_flat_d(int nsys, int n, const double *src,
                                                     double *dst);
cs_solver_status cs_thomas_gpu_flat_to_interleaved_f(int nsys, int n, const float *src,
                                                     float *dst);
cs_solver_status cs_thomas_gpu_interleaved_to_flat_f(int nsys, int n, const float *src,
                                                     float *dst);
/* Variable-size batch: packed Flat arrays (offset[nsys] rows, offset on the device, every n_s in
 * [0, n_max]) to padded Full-Interleaved ones (nsys·n_max elements) with identity padding; and
 * the solution back. */
cs_solver_status cs_thomas_gpu_var_pack_d(int nsys, int n_max, const int *offset,
                                          const double *a, const double *b, const double *c,
                                          const double *d, double *ai, double *bi, double *ci,
                                          double *di);
cs_solver_status cs_thomas_gpu_var_unpack_d(int nsys, int n_max, const int *offset,
                                            const double *xi, double *x);
cs_solver_status cs_thomas_gpu_var_pack_f(int nsys, int n_max, const int *offset, const float *a,
                                          const float *b, const float *c, const float *d,
                                          float *ai, float *bi, float *ci, float *di);
cs_solver_status cs_thomas_gpu_var_unpack_f(int nsys, int n_max, const int *offset,
                                            const float *xi, float *x);

/* ---- device and memory, for C callers that include no CUDA header ------------------- */
/* Number of usable CUDA devices: 0 (and CS_SOLVER_OK) when the driver reports none. */
cs_solver_status cs_thomas_gpu_device_count(int *count);
/* Name of the current device ("NVIDIA H200"), truncated to len-1 characters. */
cs_solver_status cs_thomas_gpu_device_name(char *name, size_t len);
/* The current device of this thread (cudaSetDevice/cudaGetDevice): malloc and stream_create
 * work on it. */
cs_solver_status cs_thomas_gpu_set_device(int device);
cs_solver_status cs_thomas_gpu_get_device(int *device);
cs_solver_status cs_thomas_gpu_malloc(void **ptr, size_t bytes);
cs_solver_status cs_thomas_gpu_free(void *ptr);
/* Copies that return once the bytes have arrived (kernels on any stream may then read them). */
cs_solver_status cs_thomas_gpu_to_device(void *dst, const void *src, size_t bytes);
cs_solver_status cs_thomas_gpu_to_host(void *dst, const void *src, size_t bytes);
/* Streams for the calls that take one (void * is a cudaStream_t). */
cs_solver_status cs_thomas_gpu_stream_create(void **stream);
cs_solver_status cs_thomas_gpu_stream_synchronize(void *stream);
cs_solver_status cs_thomas_gpu_stream_destroy(void *stream);
/* Wait for the device; reports an error of earlier asynchronous work. */
cs_solver_status cs_thomas_gpu_synchronize(void);
/* One-line message of this thread's most recent failure ("" when none). */
const char *cs_thomas_gpu_last_error(void);

#ifdef __cplusplus
}
#endif
#endif

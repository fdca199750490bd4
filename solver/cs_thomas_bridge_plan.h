/* The plan of one partition of the bridge across devices (cs_thomas_gpu_bridge_multi_d,
 * solver/cs_thomas_bridge_multi_gpu.cu), in C so that the CPU test that emulates the algorithm
 * (tests/test_thomas_bridge_multi_cpu.c) walks the same levels and workspace.
 *
 * A partition holds m rows of one system, rows 0 and m-1 coupled to the neighbouring partitions.
 * Level 0 is the partition's own arrays. At level l (m_l rows) the whole chunks of K rows, rows
 * [0, body_l) with body_l = m_l - m_l mod K, are reduced to the 2·body_l/K rows of level l+1
 * (the chunk kernels, cs_thomas_large_gpu.cu); the remaining rows [body_l, m_l), the tail T_l
 * (< K rows), stay. In the system's row order the unknowns are then
 *     level L's rows, T_{L-1}, ..., T_1, T_0
 * (level l+1's last row is the L unknown of level l's last chunk, whose next row is T_l's first),
 * a chain of at most TOP rows: the top. It is gathered into one array, reduced to the partition's
 * two bridge rows, and after the bridge its solution is scattered back to the levels. L is the
 * smallest number of levels that leaves at most TOP rows on top.
 *
 * Offsets are in elements of the workspace (counted in double, so enough for float), every
 * array starts at a multiple of 32 elements. */
#ifndef CS_THOMAS_BRIDGE_PLAN_H
#define CS_THOMAS_BRIDGE_PLAN_H

#include <stddef.h>

#define CS__BRIDGE_K 16      /* rows per chunk (CS__CHUNK_K) */
#define CS__BRIDGE_TOP 1024  /* rows of the top solved in one block (CS__CHUNK_BASE) */
#define CS__BRIDGE_MAXL 12   /* levels at most */
#ifdef __CUDACC__
#define CS__BRIDGE_HD __host__ __device__
#else
#define CS__BRIDGE_HD
#endif

typedef struct {
    int L;                            /* levels reduced */
    size_t m[CS__BRIDGE_MAXL + 1];    /* rows of level l */
    size_t body[CS__BRIDGE_MAXL + 1]; /* rows of level l reduced to level l+1 (l < L) */
    size_t top;                       /* rows on top: m[L] + the tails */
    size_t lev[CS__BRIDGE_MAXL + 1];  /* offset of level l's a, b, c, d (l >= 1; 4 arrays) */
    size_t ta, y, v, w;               /* the top's a, b, c, d (4 arrays of TOP), y, v, w */
    size_t brow;                      /* the partition's two bridge rows (8 elements) */
    size_t bx;                        /* its two bridge unknowns F, L (2 elements) */
    size_t gat, gx;                   /* on partition 0: all parts' bridge rows, the solution */
    size_t total;                     /* elements */
} cs__bridge_plan;

static inline size_t cs__bridge_r32(size_t m) { return (m + 31) / 32 * 32; }

/* 0 when m < 2 rows, parts out of 1..64, or m too large for the levels. */
static inline int cs__bridge_plan_make(size_t m, int parts, cs__bridge_plan *P)
{
    if (m < 2 || parts < 1 || parts > 64) return 0;
    for (int L = 0; L <= CS__BRIDGE_MAXL; ++L) {
        size_t top = 0;
        P->L = L;
        P->m[0] = m;
        for (int l = 0; l < L; ++l) {
            P->body[l] = P->m[l] / CS__BRIDGE_K * CS__BRIDGE_K;
            P->m[l + 1] = 2 * P->body[l] / CS__BRIDGE_K;
            top += P->m[l] - P->body[l];
        }
        P->body[L] = P->m[L];
        top += P->m[L];
        if (top > CS__BRIDGE_TOP) continue;
        P->top = top;
        size_t off = 0;
        P->lev[0] = 0;
        for (int l = 1; l <= L; ++l) P->lev[l] = off, off += 4 * cs__bridge_r32(P->m[l]);
        P->ta = off, off += 4 * (size_t)CS__BRIDGE_TOP;
        P->y = off, off += CS__BRIDGE_TOP;
        P->v = off, off += CS__BRIDGE_TOP;
        P->w = off, off += CS__BRIDGE_TOP;
        P->brow = off, off += 32;
        P->bx = off, off += 32;
        P->gat = off, off += cs__bridge_r32(8 * (size_t)parts);
        P->gx = off, off += cs__bridge_r32(2 * (size_t)parts);
        P->total = off;
        return 1;
    }
    return 0;
}

/* Row i of the top: its level and its row there. */
CS__BRIDGE_HD static inline void cs__bridge_top_row(const cs__bridge_plan *P, size_t i, int *level, size_t *row)
{
    if (i < P->m[P->L]) {
        *level = P->L, *row = i;
        return;
    }
    i -= P->m[P->L];
    for (int l = P->L - 1; l >= 0; --l) {
        const size_t t = P->m[l] - P->body[l];
        if (i < t) {
            *level = l, *row = P->body[l] + i;
            return;
        }
        i -= t;
    }
    *level = -1, *row = 0; /* past the top */
}

#endif

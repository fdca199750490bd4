/* Build and run: mpicc -O2 bench/mpi_exchange_bench.c -o /tmp/xb && mpirun -np N /tmp/xb (docs/mpi.md). */
/* The per-epoch exchange of cablesim: an Allgather of (bytes, status) then an Iallgatherv of
 * 16-byte spikes, waited at once. Mean time per exchange [us]. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ks[] = {0, 16, 256, 4096};
    for (int ik = 0; ik < 4; ++ik) {
        int k = ks[ik], iters = k >= 4096 ? 200 : 2000;
        char *send = calloc((size_t)k * 16 + 1, 1), *recv = calloc((size_t)k * 16 * size + 1, 1);
        int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
        uint64_t mine[2] = {(uint64_t)k * 16, 0}, *all = malloc(2 * size * sizeof(uint64_t));
        double t0 = 0;
        for (int it = -50; it < iters; ++it) {
            if (it == 0) { MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); }
            MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, MPI_COMM_WORLD);
            int off = 0;
            for (int r = 0; r < size; ++r) { counts[r] = (int)all[2 * r]; displs[r] = off; off += counts[r]; }
            MPI_Request req;
            MPI_Iallgatherv(send, k * 16, MPI_BYTE, recv, counts, displs, MPI_BYTE, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        double t = (MPI_Wtime() - t0) / iters, tmax;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) printf("ranks %d  spikes/rank %5d  (%7d bytes gathered)  %8.1f us per exchange\n", size, k, k * 16 * size, tmax * 1e6);
        free(send); free(recv); free(counts); free(displs); free(all);
    }
    MPI_Finalize();
    return 0;
}

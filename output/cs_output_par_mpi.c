/* The ranks' agreement of a collective file (cs_output_internal.h: cs__par_*): MPI builds only; a
 * serial build has the identities in cs_output.c. Its own file so that the writer (cs_output.c)
 * and the collective open (cs_output_mpi.c) do not call each other. */
#include <hdf5.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "cs_output_internal.h"

static MPI_Comm cs__comm(const cs_output *o) {
    return *(const MPI_Comm *)o->comm;
}

int cs__par_any(const cs_output *o, int flag) {
    if (!o->comm) return flag;
    int any = flag;
    /* a failed reduction can only be answered by stopping every rank's writes */
    if (MPI_Allreduce(&flag, &any, 1, MPI_INT, MPI_MAX, cs__comm(o)) != MPI_SUCCESS) return 1;
    return any;
}

void cs__par_bcast(const cs_output *o, void *buf, size_t n) {
    if (o->comm) MPI_Bcast(buf, (int)n, MPI_BYTE, 0, cs__comm(o));
}

char *cs__par_string(const cs_output *o, const char *s) {
    unsigned long long n = o->rank == 0 ? (unsigned long long)strlen(s) : 0;
    cs__par_bcast(o, &n, sizeof n);
    char *c = malloc((size_t)n + 1);
    int bad = cs__par_any(o, !c); /* every rank goes on to the same broadcast, or none does */
    if (bad) {
        free(c);
        return NULL;
    }
    if (o->rank == 0) memcpy(c, s, (size_t)n);
    cs__par_bcast(o, c, (size_t)n);
    c[n] = '\0';
    return c;
}

void cs__par_release(cs_output *o) {
    if (!o->comm) return;
    if (o->dxpl != H5P_DEFAULT) H5Pclose(o->dxpl);
    o->dxpl = H5P_DEFAULT;
    MPI_Comm_free((MPI_Comm *)o->comm);
    free(o->comm);
    o->comm = NULL;
}

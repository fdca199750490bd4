/* The collective writer: one file written by every rank through parallel HDF5 (MPI-IO), behind
 * the interface of cs_output.h (docs/mpi.md, "Output"). Compiled in MPI builds only; without a
 * parallel HDF5 cs_output_open_parallel says so and the caller falls back to gathering to
 * rank 0's serial writer. The ranks' agreement it relies on is in cs_output_par_mpi.c. */
#include <hdf5.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "cs_output_internal.h"

#ifdef H5_HAVE_PARALLEL

cs_status cs_output_open_parallel(const char *path, const void *comm, cs_output **out) {
    CS_CHECK(out, CS_ERR_INVALID, "cs_output_open_parallel: no output pointer");
    *out = NULL;
    CS_CHECK(path && path[0] && comm, CS_ERR_INVALID, "cs_output_open_parallel: empty output path or no communicator");
    H5dont_atexit(); /* see cs_output_open */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

    cs_output *o = calloc(1, sizeof *o);
    char *p = cs__strdup(path);
    MPI_Comm *c = malloc(sizeof *c);
    int bad = !o || !p || !c;
    if (!bad && MPI_Comm_dup(*(const MPI_Comm *)comm, c) != MPI_SUCCESS) bad = 1;
    /* the duplicate is made on every rank or the call fails on every rank (MPI's errors) */
    if (bad) {
        free(o);
        free(p);
        free(c);
        return cs_error_set(CS_ERR_NOMEM, "%s: out of memory opening the output", path);
    }
    o->path = p;
    o->comm = c;
    o->file = H5I_INVALID_HID;
    o->metadata = H5I_INVALID_HID;
    o->fd = -1;
    o->dxpl = H5P_DEFAULT;
    MPI_Comm_rank(*c, &o->rank);
    MPI_Comm_size(*c, &o->nrank);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    int ok = fapl >= 0 && dxpl >= 0 && H5Pset_fapl_mpio(fapl, *c, MPI_INFO_NULL) >= 0 &&
             H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) >= 0;
    if (dxpl >= 0) o->dxpl = dxpl;
    cs_status s = CS_OK;
    if (cs__par_any(o, !ok)) {
        s = cs__io_error(path, "cannot set up parallel HDF5 (MPI-IO)");
    } else {
        s = cs__create_file(o, fapl);
    }
    if (fapl >= 0) H5Pclose(fapl);
    if (s != CS_OK) {
        if (o->file >= 0) {
            cs_output_close(o, 0);
        } else {
            cs__par_release(o);
            free(o->path);
            free(o);
        }
        return s;
    }
    *out = o;
    return CS_OK;
}

#else

cs_status cs_output_open_parallel(const char *path, const void *comm, cs_output **out) {
    (void)comm;
    if (out) *out = NULL;
    return cs_error_set(CS_ERR_UNSUPPORTED, "%s: this HDF5 is not parallel: no collective output", path ? path : "");
}

#endif

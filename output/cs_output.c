/* The output file: open, metadata, profile, flush and close (see cs_output.h and
 * docs/output-format.md). The datasets that grow are in cs_output_data.c, the HDF5 helpers in
 * cs_output_hdf5.c, the collective writer over MPI ranks in cs_output_mpi.c.
 *
 * Everything appended goes straight to extendible chunked datasets; nothing of the run is kept
 * in memory beyond HDF5's bounded chunk cache and one epoch's spikes while they are sorted.
 * The file uses the default (oldest compatible) HDF5 format, whose superblock carries no
 * "open for writing" flag, so a process killed after cs_output_flush leaves a file that any
 * HDF5 reader opens as it was at that flush. */
#include "cs_output.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_output_internal.h"

/* Create the file through `fapl` with its groups and `status`; on failure o->file may be
 * open (cs_output_close releases it) or invalid. */
cs_status cs__create_file(cs_output *o, hid_t fapl) {
    const char *path = o->path;
    o->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (cs__par_any(o, o->file < 0)) {
        cs_status s = o->file < 0 ? cs__io_error(path, "cannot create the output file")
                                  : cs_error_set(CS_ERR_IO, "%s: cannot create the output file on another rank", path);
        cs__close_id(&o->file, H5Fclose);
        /* an empty file left by a failed create (a full disk) is no HDF5 file: remove it */
        struct stat st;
        if (o->rank == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) remove(path);
        return s;
    }
    if (o->rank == 0) o->fd = open(path, O_WRONLY);
    cs_status r = cs__reserve_growth(o, CS__LAYOUT_BYTES, 0, "cannot write the output file's layout");
    if (r != CS_OK) { /* nothing is in the file yet: no file is left */
        /* Left open, not closed: H5Fclose would fail to flush on the full disk, and parallel
         * HDF5 1.10 then crashes in MPI_Finalize on the half-closed ID (H5F__close_cb from its
         * MPI attribute callback). Left open, its terminator's flush fails quietly. */
        o->file = H5I_INVALID_HID;
        cs__par_any(o, 0); /* every rank is past the create */
        if (o->rank == 0) remove(path);
        return r;
    }
    hid_t g1 = H5Gcreate2(o->file, "spikes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g2 = H5Gcreate2(o->file, "report", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    o->metadata = H5Gcreate2(o->file, "metadata", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int ok = g1 >= 0 && g2 >= 0 && o->metadata >= 0 &&
             cs__write_string_attr(o->file, "status", "incomplete") >= 0;
    hid_t es = cs__keep_error(ok ? 0 : -1);
    if (g1 >= 0) H5Gclose(g1);
    if (g2 >= 0) H5Gclose(g2);
    cs__restore_error(es);
    if (cs__par_any(o, !ok)) {
        cs_status s = !ok ? cs__io_error(path, "cannot write the output file's layout")
                          : cs_error_set(CS_ERR_IO, "%s: cannot write the output file's layout on another rank", path);
        return s;
    }
    return CS_OK;
}

cs_status cs_output_open(const char *path, cs_output **out) {
    CS_CHECK(out, CS_ERR_INVALID, "cs_output_open: no output pointer");
    *out = NULL;
    CS_CHECK(path && path[0], CS_ERR_INVALID, "cs_output_open: empty output path");
    /* HDF5 1.10 keeps a dangling file ID when H5Fclose fails (a flush on a full disk): its
     * exit handler then crashes on it (H5F__close_cb from H5_term_library). Every file this
     * library opens is closed explicitly, so the handler has nothing to do: skip it. Effective
     * only before HDF5's first use in the process; harmless (a no-op) after. */
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors become messages, never stderr dumps */

    cs_output *o = calloc(1, sizeof *o);
    char *p = cs__strdup(path);
    if (!o || !p) {
        free(o);
        free(p);
        return cs_error_set(CS_ERR_NOMEM, "%s: out of memory opening the output", path);
    }
    o->path = p;
    o->metadata = H5I_INVALID_HID;
    o->fd = -1;
    o->nrank = 1;
    o->dxpl = H5P_DEFAULT;
    cs_status s = cs__create_file(o, H5P_DEFAULT);
    if (s != CS_OK) {
        if (o->file >= 0) {
            cs_output_close(o, 0);
        } else {
            free(o->path);
            free(o);
        }
        return s;
    }
    *out = o;
    return CS_OK;
}

cs_status cs_output_set_meta_string(cs_output *o, const char *name, const char *value) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_set_meta_string: no output");
    CS__STOP_IF_FAILED(o);
    CS_CHECK(name && name[0] && value, CS_ERR_INVALID,
             "%s: metadata needs a non-empty name and a value", o->path);
    /* a parallel file: every rank writes rank 0's value (attributes are collective) */
    char *v = o->comm ? cs__par_string(o, value) : NULL;
    CS_CHECK(!o->comm || v, CS_ERR_NOMEM, "%s: out of memory", o->path);
    cs_status s = CS_OK;
    if (cs__write_string_attr(o->metadata, name, v ? v : value) < 0) {
        char what[64 + 1024];
        snprintf(what, sizeof what, "cannot write metadata '%s'", name);
        s = cs__fail_io(o, what);
    }
    free(v);
    return cs__par_agree(o, s);
}

cs_status cs_output_set_meta_double(cs_output *o, const char *name, double value) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_set_meta_double: no output");
    CS__STOP_IF_FAILED(o);
    CS_CHECK(name && name[0], CS_ERR_INVALID, "%s: metadata needs a non-empty name", o->path);
    cs__par_bcast(o, &value, sizeof value); /* rank 0's value on every rank of a parallel file */
    cs_status s = CS_OK;
    if (cs__write_double_attr(o->metadata, name, value) < 0) {
        char what[64 + 1024];
        snprintf(what, sizeof what, "cannot write metadata '%s'", name);
        s = cs__fail_io(o, what);
    }
    return cs__par_agree(o, s);
}

/* /profile in `file`, opened serially (HDF5 1.10 writes no variable-length strings in
 * parallel: a parallel file gets its profile from rank 0 after the collective close). */
static herr_t cs__write_profile_at(hid_t file, size_t nphase, const char *const *names,
                                   const double *seconds, const double *share) {
    const cs_output serial = {.nrank = 1, .dxpl = H5P_DEFAULT};
    hid_t prof = H5I_INVALID_HID, st = H5I_INVALID_HID;
    int ok = 0;
    do {
        /* Written again, the profile replaces the previous one. */
        htri_t exists = H5Lexists(file, "profile", H5P_DEFAULT);
        if (exists < 0 || (exists > 0 && H5Ldelete(file, "profile", H5P_DEFAULT) < 0)) break;
        prof = H5Gcreate2(file, "profile", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (prof < 0) break;
        st = cs__utf8_string_type();
        if (st < 0) break;
        if (cs__write_fixed(&serial, prof, "phase", st, st, (hsize_t)nphase, names) < 0) break;
        if (cs__write_fixed(&serial, prof, "seconds", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)nphase,
                            seconds) < 0)
            break;
        if (cs__write_fixed(&serial, prof, "share", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)nphase,
                            share) < 0)
            break;
        hid_t d = H5Dopen2(prof, "seconds", H5P_DEFAULT);
        if (d < 0) break;
        herr_t e = cs__write_string_attr(d, "units", "s");
        H5Dclose(d);
        if (e < 0) break;
        ok = 1;
    } while (0);
    hid_t es = cs__keep_error(ok ? 0 : -1);
    cs__close_id(&st, H5Tclose);
    cs__close_id(&prof, H5Gclose);
    cs__restore_error(es);
    return ok ? 0 : -1;
}


cs_status cs_output_write_profile(cs_output *o, size_t nphase, const char *const *names,
                                  const double *seconds, const double *share) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_write_profile: no output");
    CS__STOP_IF_FAILED(o);
    CS_CHECK(nphase == 0 || (names && seconds && share), CS_ERR_INVALID,
             "%s: profile without names, seconds or shares", o->path);
    for (size_t i = 0; i < nphase; ++i)
        CS_CHECK(names[i], CS_ERR_INVALID, "%s: profile phase %zu has no name", o->path, i);

    if (o->comm) { /* kept for cs_output_close (rank 0's values are the ones written) */
        for (size_t i = 0; i < o->prof_n; ++i) free(o->prof_names[i]);
        free(o->prof_names);
        free(o->prof_seconds);
        free(o->prof_share);
        o->prof_n = 0;
        o->prof_names = calloc(nphase + 1, sizeof *o->prof_names);
        o->prof_seconds = malloc((nphase + 1) * sizeof *o->prof_seconds);
        o->prof_share = malloc((nphase + 1) * sizeof *o->prof_share);
        CS_CHECK(o->prof_names && o->prof_seconds && o->prof_share, CS_ERR_NOMEM, "%s: out of memory", o->path);
        for (size_t i = 0; i < nphase; ++i) {
            o->prof_names[i] = cs__strdup(names[i]);
            CS_CHECK(o->prof_names[i], CS_ERR_NOMEM, "%s: out of memory", o->path);
            o->prof_seconds[i] = seconds[i];
            o->prof_share[i] = share[i];
        }
        o->prof_n = nphase;
        return CS_OK;
    }
    if (cs__write_profile_at(o->file, nphase, names, seconds, share) < 0)
        return cs__fail_io(o, "cannot write /profile");
    return CS_OK;
}

/* Allocate on disk every byte HDF5 has assigned so far plus `extra` bytes it is about to assign,
 * on rank 0 (which holds the descriptor), and let every rank learn the outcome: on a full disk
 * every rank fails here, before a write that could fail on some ranks only (cs__reserve_growth).
 * The base is HDF5's end of allocation; the MPI-IO driver gives none, and there the file's size
 * on disk serves, which already holds every earlier reservation (so each adds its own bytes).
 * Returns 0, or the errno of a full disk. */
static int cs__reserve_bytes(cs_output *o, hsize_t extra) {
    haddr_t base = 0;
    int e = 0, known = 0;
    if (o->fd >= 0) {
        struct stat st;
        if (H5Fget_eoa(o->file, &base) >= 0) known = 1;
        else if (H5Eclear2(H5E_DEFAULT), fstat(o->fd, &st) == 0) known = 1, base = (haddr_t)st.st_size;
    }
    if (known) {
        haddr_t want = base + extra; /* [bytes] */
        if (want > o->reserved) {
            e = posix_fallocate(o->fd, (off_t)o->reserved, (off_t)(want - o->reserved));
            if (e == 0) o->reserved = want; /* otherwise (not supported here): write unreserved */
        }
    }
    int full = e == ENOSPC || e == EFBIG || e == EIO || e == EDQUOT;
    return cs__par_any(o, full) ? (full ? e : ENOSPC) : 0;
}

cs_status cs__reserve_growth(cs_output *o, hsize_t bytes, hsize_t chunks, const char *what) {
    /* a serial file fails where it fails, alone; a call that allocates nothing (rows inside a
     * band already allocated, spikes inside a chunk) needs no agreement: every rank skips alike,
     * since the sizes are the same on every rank */
    if (!o->comm || (bytes == 0 && chunks == 0)) return CS_OK;
    int e = cs__reserve_bytes(o, bytes + 1024 * chunks);
    if (!e) return CS_OK;
    o->io_failed = 1;
    return cs_error_set(CS_ERR_IO, "%s: %s (%s)", o->path, what, strerror(e));
}

/* Before a flush writes metadata: a flush writes metadata in address order and stops at the
 * first failed write, so on a full disk it would leave headers pointing at objects past the
 * stored end of file (unreadable). Reserved first, the flush cannot run out of space; if the
 * reservation fails, nothing is flushed and the file stays as it was at the previous flush.
 * The flush first allocates the chunks still in the chunk caches (at most those touched since
 * the last flush) and their index nodes past eoa: room for them is reserved too. */
static cs_status cs__reserve(cs_output *o) {
    hsize_t chunks = 0, bytes = 0; /* [bytes] */
    /* a parallel file reserved its chunks as it grew (cs__reserve_growth) */
    for (size_t i = 0; !o->comm && i < o->n_spikes; ++i) {
        const cs__spikes *sp = &o->spikes[i];
        if (sp->n == sp->n_flushed) continue;
        hsize_t c = (sp->n - 1) / CS__SPIKE_CHUNK - sp->n_flushed / CS__SPIKE_CHUNK + 1;
        chunks += 2 * c;
        bytes += 2 * c * CS__SPIKE_CHUNK * 8; /* timestamps and node_ids, 8 bytes each */
    }
    for (size_t i = 0; !o->comm && i < o->n_reports; ++i) {
        const cs__report *rp = &o->reports[i];
        if (rp->rows == rp->rows_flushed) continue;
        hsize_t bands = (rp->rows - 1) / CS__REPORT_CHUNK_ROWS - rp->rows_flushed / CS__REPORT_CHUNK_ROWS + 1;
        chunks += bands * cs__report_band_chunks(rp);
        bytes += bands * cs__report_band_bytes(rp);
    }
    int e = cs__reserve_bytes(o, bytes + 1024 * chunks + ((hsize_t)16 << 10)); /* and the metadata */
    if (!e) return CS_OK;
    o->io_failed = 1;
    return cs_error_set(CS_ERR_IO, "%s: cannot flush (%s)", o->path, strerror(e));
}

cs_status cs_output_flush(cs_output *o) {
    CS_CHECK(o, CS_ERR_INVALID, "cs_output_flush: no output");
    CS__STOP_IF_FAILED(o);
    cs_status s = CS_OK;
    for (size_t i = 0; i < o->n_reports && s == CS_OK; ++i)
        if (cs__write_axis(o, &o->reports[i]) < 0) s = cs__fail_io(o, "cannot update a time axis");
    CS_TRY(cs__par_agree(o, s));
    CS_TRY(cs__reserve(o));
    if (H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0) s = cs__fail_io(o, "cannot flush");
    CS_TRY(cs__par_agree(o, s));
    for (size_t i = 0; i < o->n_spikes; ++i) o->spikes[i].n_flushed = o->spikes[i].n;
    for (size_t i = 0; i < o->n_reports; ++i) o->reports[i].rows_flushed = o->reports[i].rows;
    return CS_OK;
}

/* A parallel file after its collective close: rank 0 reopens it alone to add what HDF5 1.10
 * cannot write in parallel (the profile's variable-length strings), then marks it complete. */
static cs_status cs__finish_serial(cs_output *o, int complete) {
    /* room first (the profile and the attribute are a few kB): on a full disk the file is left
     * as the collective close wrote it, incomplete, and no HDF5 ID is left half-closed (parallel
     * HDF5 1.10 would crash on it in MPI_Finalize) */
    int fd = open(o->path, O_WRONLY), e = 0;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) e = errno;
    else e = posix_fallocate(fd, st.st_size, (off_t)CS__LAYOUT_BYTES);
    if (fd >= 0) close(fd);
    if (e == ENOSPC || e == EFBIG || e == EIO || e == EDQUOT)
        return cs_error_set(CS_ERR_IO, "%s: cannot write /profile (%s)", o->path, strerror(e));
    hid_t f = H5Fopen(o->path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) return cs__io_error(o->path, "cannot reopen the output file to finish it");
    int ok = 1;
    if (o->prof_n && cs__write_profile_at(f, o->prof_n, (const char *const *)o->prof_names, o->prof_seconds,
                                          o->prof_share) < 0)
        ok = 0;
    cs_status s = ok ? CS_OK : cs__io_error(o->path, "cannot write /profile");
    if (s == CS_OK && complete && cs__write_string_attr(f, "status", "complete") < 0)
        s = cs__io_error(o->path, "cannot mark the file complete");
    if (H5Fclose(f) < 0 && s == CS_OK) s = cs__io_error(o->path, "cannot close the output file");
    return s;
}

cs_status cs_output_close(cs_output *o, int complete) {
    if (!o) return CS_OK;
    cs_status s = CS_OK;
    int flushed = 0;
    if (complete && o->file >= 0) {
        for (size_t i = 0; i < o->n_reports && s == CS_OK; ++i)
            if (o->reports[i].rows != o->reports[i].expected_rows)
                s = cs_error_set(CS_ERR_INVALID,
                                 "%s: report '%s' has %llu rows but its time axis has %llu "
                                 "samples; file left marked incomplete",
                                 o->path, o->reports[i].name,
                                 (unsigned long long)o->reports[i].rows,
                                 (unsigned long long)o->reports[i].expected_rows);
        if (s == CS_OK && o->io_failed)
            s = cs_error_set(CS_ERR_IO, "%s: an earlier write failed; file left marked incomplete",
                             o->path);
        /* everything else reaches the file before it is called complete, so a failure here
         * leaves "incomplete" on disk */
        if (s == CS_OK) {
            s = cs_output_flush(o);
            flushed = 1;
        }
        /* a parallel file is marked complete by rank 0 after the collective close */
        if (s == CS_OK && !o->comm && cs__write_string_attr(o->file, "status", "complete") < 0)
            s = cs__fail_io(o, "cannot mark the file complete");
    }
    if (!flushed && o->file >= 0 && !o->io_failed) {
        /* what a failed run wrote, flushed now so a full disk shows here, before any close */
        cs_status e = cs_output_flush(o);
        if (s == CS_OK) s = e;
    }
    /* After a failed write the file is left as it was at the last flush: closing any HDF5
     * object would flush it again, part-way on a full disk. Its handles are abandoned (the
     * process is about to report the error; cs_output_open skips HDF5's exit handler). */
    const int keep_file = !o->io_failed;
    if (!keep_file && o->comm && o->file >= 0)
        /* A parallel file cannot be left as it was at the last flush: parallel HDF5 flushes its
         * abandoned handles in MPI_Finalize, the reports' extents included. So the time axes
         * are made to describe the rows those extents hold (written in place, in space the
         * layout allocated; a failure here changes nothing of the outcome). */
        for (size_t i = 0; i < o->n_reports; ++i) {
            cs__report *rp = &o->reports[i];
            hsize_t dims[2] = {0, 0};
            hid_t sp = H5Dget_space(rp->data);
            if (sp >= 0 && H5Sget_simple_extent_dims(sp, dims, NULL) == 2) rp->rows = dims[0];
            if (sp >= 0) H5Sclose(sp);
            if (cs__write_axis(o, rp) < 0) H5Eclear2(H5E_DEFAULT);
        }
    for (size_t i = 0; i < o->n_spikes; ++i) {
        if (keep_file) {
            cs__close_id(&o->spikes[i].timestamps, H5Dclose);
            cs__close_id(&o->spikes[i].node_ids, H5Dclose);
            cs__close_id(&o->spikes[i].group, H5Gclose);
        }
        free(o->spikes[i].name);
    }
    for (size_t i = 0; i < o->n_reports; ++i) {
        if (keep_file && o->file >= 0 && cs__write_axis(o, &o->reports[i]) < 0) {
            cs_status e = cs__io_error(o->path, "cannot update a time axis");
            if (s == CS_OK) s = e;
        }
        if (keep_file) {
            cs__close_id(&o->reports[i].time, H5Dclose);
            cs__close_id(&o->reports[i].data, H5Dclose);
        }
        free(o->reports[i].name);
    }
    int closed = 0;
    if (keep_file) {
        cs__close_id(&o->metadata, H5Gclose);
        if (o->file >= 0 && cs__reserve(o) != CS_OK) {
            if (s == CS_OK) s = CS_ERR_IO; /* cs__reserve recorded the message */
        } else if (o->file >= 0 && H5Fclose(o->file) < 0) {
            cs_status e = cs__io_error(o->path, "cannot close the output file");
            if (s == CS_OK) s = e;
        } else {
            closed = o->file >= 0;
        }
    }
    if (o->comm) {
        /* agreed: every rank returns the same status */
        s = cs__par_agree(o, s);
        cs_status f = CS_OK;
        if (o->rank == 0 && closed && (o->prof_n || (complete && s == CS_OK)))
            f = cs__finish_serial(o, complete && s == CS_OK);
        f = cs__par_agree(o, f);
        if (s == CS_OK) s = f;
        for (size_t i = 0; i < o->prof_n; ++i) free(o->prof_names[i]);
        free(o->prof_names);
        free(o->prof_seconds);
        free(o->prof_share);
        cs__par_release(o);
    }
    if (o->fd >= 0) close(o->fd);
    free(o->spikes);
    free(o->reports);
    free(o->path);
    free(o);
    return s;
}

/* Here, beside the ranks' agreement (cs__par_any) it relies on, so that the HDF5 helpers
 * (cs_output_hdf5.c) call nothing back in this file. */
cs_status cs__par_agree(cs_output *o, cs_status s) {
    if (!o->comm) return s;
    if (!cs__par_any(o, s != CS_OK)) return CS_OK;
    o->io_failed = 1;
    if (s == CS_OK) s = cs_error_set(CS_ERR_IO, "%s: a write failed on another rank", o->path);
    return s;
}

#ifndef CS_HAVE_MPI
/* One process: the agreement over ranks is the identity, and there is no parallel file. */
int cs__par_any(const cs_output *o, int flag) {
    (void)o;
    return flag;
}
void cs__par_bcast(const cs_output *o, void *buf, size_t n) {
    (void)o;
    (void)buf;
    (void)n;
}
char *cs__par_string(const cs_output *o, const char *s) {
    (void)o;
    return cs__strdup(s);
}
void cs__par_release(cs_output *o) {
    (void)o;
}
cs_status cs_output_open_parallel(const char *path, const void *comm, cs_output **out) {
    (void)comm;
    if (out) *out = NULL;
    return cs_error_set(CS_ERR_UNSUPPORTED, "%s: this build has no MPI: no parallel output", path ? path : "");
}
#endif


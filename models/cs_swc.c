/* SWC reader (NeuroMorpho conventions).
 *
 * A data line is `id type x y z radius parent` (x, y, z, radius in the file's unit, scaled by
 * opt->scale to µm). Comments (`#` to end of line), blank lines, CR/LF/CRLF line ends and samples
 * in any order are accepted. Each sample with a parent is a frustum from the parent's point to the
 * sample's point, with the two samples' radii; the tree of samples is cut into branches, maximal
 * unbranched runs of samples of one SWC type. Each branch starts with its attachment point (the
 * parent's last sample), so every branch has >= 2 points.
 *
 * Somas:
 * - single-point soma (root of type 1 without type-1 children) and three-point soma (root of type 1
 *   with exactly two type-1 children, neither with type-1 children): one soma branch, a cylinder of
 *   the root's radius r and length 2r centred on the root sample, along y (NeuroMorpho's
 *   convention), area 4πr². Every neurite leaving any of these soma samples is a child branch of the
 *   soma branch (attached at its distal end in the cable tree).
 * - any other soma (chains of type-1 samples, even branched): ordinary branches with tag 1.
 * - a neurite (type != 1) leaving a soma sample starts with the soma sample's position but the
 *   neurite's own first radius (NEURON and Arbor never use the soma radius inside a neurite), so no
 *   frustum flares from the dendrite radius to the soma radius.
 *
 * Duplicate consecutive points (zero-length frustums): the first sample of a branch that lies on
 * the attachment point is merged into it, the point taking the sample's radius (MorphIO and others
 * repeat the fork point at the start of each child; its annulus is not membrane). A duplicate inside
 * a branch is kept: it is a step of the radius, a frustum of length 0 whose lateral area is the
 * annulus π(r1+r2)|r1−r2| and whose axial resistance is 0 (cs_discretize handles it without
 * dividing by 0). A branch whose points all coincide (total length 0) is an error naming its line.
 *
 * Cost: O(n log n) (ids are sorted once; parents are found by binary search). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_morph.h"

typedef struct {
    int64_t id, parent;
    int type;
    int line;              /* 1-based line number in the file */
    double x, y, z, r;     /* [µm] after scaling */
} swc_sample;

typedef struct {
    int64_t id;
    int index; /* in file order */
} id_index;

static int cmp_id_index(const void *a, const void *b) {
    const id_index *p = a, *q = b;
    if (p->id != q->id) return p->id < q->id ? -1 : 1;
    return p->index < q->index ? -1 : (p->index > q->index);
}

/* Index (file order) of the sample with this id, or -1. */
static int find_id(const id_index *sorted, int n, int64_t id) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (sorted[mid].id == id) return sorted[mid].index;
        if (sorted[mid].id < id) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

static const char *const field_name[7] = {"id", "type", "x", "y", "z", "radius", "parent"};

/* Read the whole file into a NUL-terminated buffer. */
static cs_status read_file(const char *path, char **out, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return cs_error_set(CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        fclose(f);
        return cs_error_set(CS_ERR_NOMEM, "%s: out of memory", path);
    }
    for (;;) {
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                return cs_error_set(CS_ERR_NOMEM, "%s: out of memory", path);
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return cs_error_set(CS_ERR_IO, "%s: read error", path);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return CS_OK;
}

/* Parse one data line (comment already cut, NUL-terminated). Returns 0 for a blank line,
 * 1 for a sample, or an error status (< 0). */
static int parse_line(const char *path, int lineno, char *s, char *end, const cs_swc_options *opt,
                      swc_sample *out) {
    double v[7];
    int nf = 0;
    char *p = s;
    while (p < end) {
        while (p < end && is_space(*p)) ++p;
        if (p >= end) break;
        char *tok = p;
        while (p < end && !is_space(*p)) ++p;
        if (nf < 7) {
            char save = *p;
            *p = '\0';
            char *e = NULL;
            errno = 0;
            double d = strtod(tok, &e);
            int ok = e != tok && *e == '\0';
            if (!ok) {
                cs_status st = cs_error_set(CS_ERR_PARSE,
                                            "%s:%d: field %d (%s) '%.40s' is not a number; expected 7 numeric "
                                            "fields: id type x y z radius parent",
                                            path, lineno, nf + 1, field_name[nf], tok);
                *p = save;
                return st;
            }
            *p = save;
            v[nf] = d;
        }
        ++nf;
    }
    if (nf == 0) return 0;
    if (nf != 7)
        return cs_error_set(CS_ERR_PARSE,
                            "%s:%d: expected 7 numeric fields (id type x y z radius parent), found %d", path,
                            lineno, nf);
    for (int i = 0; i < 7; ++i)
        if (!isfinite(v[i]))
            return cs_error_set(CS_ERR_PARSE, "%s:%d: non-finite value %g in field %d (%s)", path, lineno, v[i],
                                i + 1, field_name[i]);
    /* [µm] |x|, |y|, |z|, r past 1e9 (a kilometre) are no neuron, and lose the µm-scale
     * differences of a branch to rounding (zero-length branches) */
    for (int i = 2; i < 6; ++i)
        if (fabs(v[i]) > 1e9)
            return cs_error_set(CS_ERR_PARSE, "%s:%d: %s = %g is out of range (|value| <= 1e9)", path,
                                lineno, field_name[i], v[i]);
    const int int_fields[3] = {0, 1, 6};
    for (int k = 0; k < 3; ++k) {
        double d = v[int_fields[k]];
        if (d != floor(d) || fabs(d) > 9.0e15)
            return cs_error_set(CS_ERR_PARSE, "%s:%d: field %d (%s) must be an integer (got %g)", path, lineno,
                                int_fields[k] + 1, field_name[int_fields[k]], d);
    }
    if (v[1] < INT32_MIN || v[1] > INT32_MAX)
        return cs_error_set(CS_ERR_PARSE, "%s:%d: type %g out of range", path, lineno, v[1]);
    out->id = (int64_t)v[0];
    out->type = (int)v[1];
    out->parent = (int64_t)v[6];
    out->line = lineno;
    out->x = v[2] * opt->scale;
    out->y = v[3] * opt->scale;
    out->z = v[4] * opt->scale;
    out->r = v[5] * opt->scale;
    if (!(isfinite(out->x) && isfinite(out->y) && isfinite(out->z) && isfinite(out->r)))
        return cs_error_set(CS_ERR_PARSE, "%s:%d: value overflows after scaling by %g", path, lineno, opt->scale);
    if (opt->min_radius > 0) {
        if (out->r < opt->min_radius) out->r = opt->min_radius;
    } else if (out->r <= 0) {
        return cs_error_set(CS_ERR_PARSE,
                            "%s:%d: radius %g of sample %lld must be > 0 (set min_radius to raise small radii)",
                            path, lineno, v[5], (long long)out->id);
    }
    return 1;
}

/* Split the buffer into samples. */
static cs_status parse_samples(const char *path, char *buf, size_t len, const cs_swc_options *opt,
                               swc_sample **samples, int *nsamples) {
    /* upper bound on the number of samples: number of lines */
    size_t nlines = 1;
    for (size_t i = 0; i < len; ++i) nlines += buf[i] == '\n';
    if (nlines > (size_t)INT32_MAX / 4) return cs_error_set(CS_ERR_PARSE, "%s: too many lines", path);
    swc_sample *s = malloc(nlines * sizeof *s);
    if (!s) return cs_error_set(CS_ERR_NOMEM, "%s: out of memory", path);
    int n = 0, lineno = 0;
    char *p = buf, *bufend = buf + len;
    while (p < bufend) {
        ++lineno;
        char *eol = memchr(p, '\n', (size_t)(bufend - p));
        if (!eol) eol = bufend;
        char *hash = memchr(p, '#', (size_t)(eol - p));
        char *end = hash ? hash : eol;
        if (memchr(p, '\0', (size_t)(end - p))) {
            free(s);
            return cs_error_set(CS_ERR_PARSE, "%s:%d: NUL byte in line (not a text file?)", path, lineno);
        }
        int rc = parse_line(path, lineno, p, end, opt, &s[n]);
        if (rc < 0) {
            free(s);
            return (cs_status)rc;
        }
        n += rc;
        p = eol + 1;
    }
    if (n == 0) {
        free(s);
        return cs_error_set(CS_ERR_PARSE, "%s:%d: empty file: no samples", path, lineno > 0 ? lineno : 1);
    }
    *samples = s;
    *nsamples = n;
    return CS_OK;
}

/* One branch waiting to be built: starts at sample `start`, attached to sample `attach`
 * (or -1 for none), child of branch `parent`. */
typedef struct {
    int start, attach, parent;
} pending;

typedef struct {
    const char *path;
    const swc_sample *s;
    const int *child_off, *child; /* CSR children lists in file order */
    cs_morph *m;
    int neuron_soma;              /* NEURON's Import3d: a neurite of the (one- or three-point) soma
                                     branch 0 starts at its own first sample */
} builder;

static int same_pos(const cs_point *a, const cs_point *b) { return a->x == b->x && a->y == b->y && a->z == b->z; }

/* Append a point to the branch being built (which has `*np` points so far). The branch's first
 * sample, when it lies on the attachment point, is merged into it (the point takes the sample's
 * radius): MorphIO and others repeat the fork point at the start of each child. */
static void push_point(builder *B, int first, int *np, double x, double y, double z, double r) {
    cs_point q = {x, y, z, r};
    if (*np == 1 && same_pos(&B->m->points[first], &q)) {
        B->m->points[first].r = r;
        return;
    }
    B->m->points[first + *np] = q;
    ++*np;
}

/* Build one branch from a pending item; returns its last sample, or an error (< 0). */
static int build_branch(builder *B, pending it, int *last_sample) {
    const swc_sample *s = B->s;
    cs_morph *m = B->m;
    int first = m->npoints, np = 0;
    int st = it.start;
    const swc_sample *a = &s[it.attach];
    /* a neurite leaving a soma sample does not take the soma radius */
    double ar = (a->type == CS_TAG_SOMA && s[st].type != CS_TAG_SOMA) ? s[st].r : a->r;
    int own_start = B->neuron_soma && it.parent == 0 && a->type == CS_TAG_SOMA && s[st].type != CS_TAG_SOMA;
    if (!own_start) push_point(B, first, &np, a->x, a->y, a->z, ar);
    int c = st;
    for (;;) {
        push_point(B, first, &np, s[c].x, s[c].y, s[c].z, s[c].r);
        int nch = B->child_off[c + 1] - B->child_off[c];
        if (nch != 1) break;
        int d = B->child[B->child_off[c]];
        if (s[d].type != s[c].type) break;
        c = d;
    }
    if (own_start && np < 2) { /* a one-sample neurite: from the soma's position after all */
        memmove(&m->points[first + 1], &m->points[first], (size_t)np * sizeof *m->points);
        m->points[first] = (cs_point){a->x, a->y, a->z, ar};
        ++np;
    }
    double len = 0.0; /* [µm] */
    for (int i = 1; i < np; ++i) {
        const cs_point *p = &m->points[first + i - 1], *q = &m->points[first + i];
        len += sqrt((q->x - p->x) * (q->x - p->x) + (q->y - p->y) * (q->y - p->y) + (q->z - p->z) * (q->z - p->z));
    }
    if (np < 2 || !(len > 0))
        return cs_error_set(CS_ERR_PARSE, "%s:%d: branch from sample %lld to sample %lld has zero length", B->path,
                            s[c].line, (long long)s[st].id, (long long)s[c].id);
    cs_branch *br = &m->branches[m->nbranch];
    br->parent = it.parent;
    br->tag = s[st].type;
    br->first = first;
    br->npoints = np;
    br->ncv_hint = 0;
    br->parent_pos = 1.0; /* SWC branches attach at their parent's distal end */
    m->npoints += np;
    *last_sample = c;
    return m->nbranch++;
}

cs_status cs_morph_load_swc(const char *path, const cs_swc_options *opt_in, cs_morph *out) {
    CS_CHECK(path != NULL && out != NULL, CS_ERR_INVALID, "cs_morph_load_swc: NULL argument");
    memset(out, 0, sizeof *out);
    cs_swc_options opt = {1.0, 0.0, 0};
    if (opt_in) {
        opt = *opt_in;
        if (opt.scale == 0) opt.scale = 1.0; /* a zero-initialised options struct means defaults */
    }
    CS_CHECK(isfinite(opt.scale) && opt.scale > 0, CS_ERR_INVALID, "%s: scale must be finite and > 0 (got %g)",
             path, opt.scale);
    CS_CHECK(isfinite(opt.min_radius) && opt.min_radius >= 0, CS_ERR_INVALID,
             "%s: min_radius must be finite and >= 0 (got %g)", path, opt.min_radius);

    char *buf = NULL;
    size_t len = 0;
    CS_TRY(read_file(path, &buf, &len));
    swc_sample *s = NULL;
    int n = 0;
    cs_status rc = parse_samples(path, buf, len, &opt, &s, &n);
    free(buf);
    if (rc != CS_OK) return rc;

    id_index *sorted = malloc((size_t)n * sizeof *sorted);
    int *par = malloc((size_t)n * sizeof *par);
    int *child_off = calloc((size_t)n + 1, sizeof *child_off);
    int *child = malloc((size_t)n * sizeof *child);
    int *fill = malloc((size_t)n * sizeof *fill);
    pending *stack = malloc(((size_t)n + 1) * sizeof *stack);
    if (!sorted || !par || !child_off || !child || !fill || !stack) {
        rc = cs_error_set(CS_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }

    /* ids: sort, reject duplicates */
    for (int i = 0; i < n; ++i) sorted[i] = (id_index){s[i].id, i};
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_id_index);
    for (int i = 1; i < n; ++i)
        if (sorted[i].id == sorted[i - 1].id) {
            rc = cs_error_set(CS_ERR_PARSE, "%s:%d: duplicate sample id %lld (first defined on line %d)", path,
                              s[sorted[i].index].line, (long long)sorted[i].id, s[sorted[i - 1].index].line);
            goto done;
        }

    /* parents */
    int root = -1;
    for (int i = 0; i < n; ++i) {
        if (s[i].parent < 0) {
            if (root >= 0) {
                rc = cs_error_set(CS_ERR_PARSE,
                                  "%s:%d: multiple roots/somas: sample %lld has parent %lld, but sample %lld "
                                  "(line %d) is already a root",
                                  path, s[i].line, (long long)s[i].id, (long long)s[i].parent,
                                  (long long)s[root].id, s[root].line);
                goto done;
            }
            root = i;
            par[i] = -1;
            continue;
        }
        if (s[i].parent == s[i].id) {
            rc = cs_error_set(CS_ERR_PARSE, "%s:%d: sample %lld is its own parent (cycle)", path, s[i].line,
                              (long long)s[i].id);
            goto done;
        }
        par[i] = find_id(sorted, n, s[i].parent);
        if (par[i] < 0) {
            rc = cs_error_set(CS_ERR_PARSE, "%s:%d: sample %lld has parent %lld, which is not in the file", path,
                              s[i].line, (long long)s[i].id, (long long)s[i].parent);
            goto done;
        }
    }

    /* children lists in file order (CSR) */
    for (int i = 0; i < n; ++i)
        if (par[i] >= 0) child_off[par[i] + 1]++;
    for (int i = 0; i < n; ++i) child_off[i + 1] += child_off[i];
    memcpy(fill, child_off, (size_t)n * sizeof *fill);
    for (int i = 0; i < n; ++i)
        if (par[i] >= 0) child[fill[par[i]]++] = i;

    /* every sample must descend from the root; the others lie on or below a cycle */
    {
        int *seen = fill; /* reuse: 0 = unvisited, 1 = reached from the root */
        memset(seen, 0, (size_t)n * sizeof *seen);
        int nseen = 0;
        if (root >= 0) {
            int *q = (int *)stack, qh = 0, qt = 0; /* BFS queue (n ints fit in the stack buffer) */
            q[qt++] = root;
            seen[root] = 1;
            while (qh < qt) {
                int u = q[qh++];
                ++nseen;
                for (int k = child_off[u]; k < child_off[u + 1]; ++k) {
                    seen[child[k]] = 1;
                    q[qt++] = child[k];
                }
            }
        }
        if (nseen < n) {
            int u = 0;
            while (seen[u]) ++u;
            for (int k = 0; k < n; ++k) u = par[u]; /* n steps up from an unreachable sample: on the cycle */
            if (root < 0)
                rc = cs_error_set(CS_ERR_PARSE,
                                  "%s:%d: no root sample (parent -1): sample %lld is on a cycle of parent links",
                                  path, s[u].line, (long long)s[u].id);
            else
                rc = cs_error_set(CS_ERR_PARSE,
                                  "%s:%d: sample %lld is on a cycle of parent links (not connected to the root "
                                  "sample %lld)",
                                  path, s[u].line, (long long)s[u].id, (long long)s[root].id);
            goto done;
        }
    }

    /* output storage: at most n branches (each holds >= 1 own sample) plus the soma branch;
     * each branch holds its own samples plus one attachment point */
    out->branches = calloc((size_t)n + 1, sizeof *out->branches);
    out->points = malloc((2 * (size_t)n + 4) * sizeof *out->points);
    if (!out->branches || !out->points) {
        rc = cs_error_set(CS_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    builder B = {path, s, child_off, child, out, 0};
    int sp = 0;

    /* soma convention */
    const swc_sample *R = &s[root];
    int soma_kind = 0; /* 0 none, 1 single-point, 3 three-point */
    int side[2] = {-1, -1};
    if (R->type == CS_TAG_SOMA) {
        int nsoma = 0, ok3 = 1;
        for (int k = child_off[root]; k < child_off[root + 1]; ++k) {
            int c = child[k];
            if (s[c].type != CS_TAG_SOMA) continue;
            if (nsoma < 2) side[nsoma] = c;
            ++nsoma;
            for (int j = child_off[c]; j < child_off[c + 1]; ++j)
                if (s[child[j]].type == CS_TAG_SOMA) ok3 = 0;
        }
        if (nsoma == 0) soma_kind = 1;
        else if (nsoma == 2 && ok3) soma_kind = 3;
    }
    B.neuron_soma = soma_kind && opt.neurites_at_soma_centre;
    if (soma_kind) {
        /* soma branch: cylinder of radius r, length 2r, centred on the root, along y [µm] */
        cs_point *p = &out->points[0];
        p[0] = (cs_point){R->x, R->y - R->r, R->z, R->r};
        p[1] = (cs_point){R->x, R->y + R->r, R->z, R->r};
        out->branches[0] = (cs_branch){-1, CS_TAG_SOMA, 0, 2, 0, 1.0};
        out->nbranch = 1;
        out->npoints = 2;
        /* neurites on the soma samples, in file order; pushed last-first so the first pops first */
        int nn = 0;
        int *neur = fill; /* reuse */
        for (int k = child_off[root]; k < child_off[root + 1]; ++k)
            if (child[k] != side[0] && child[k] != side[1]) neur[nn++] = child[k];
        if (soma_kind == 3)
            for (int t = 0; t < 2; ++t)
                for (int k = child_off[side[t]]; k < child_off[side[t] + 1]; ++k) neur[nn++] = child[k];
        /* merge the (file-ordered) lists into file order: insertion sort on indices (few items) */
        for (int i = 1; i < nn; ++i) {
            int v = neur[i], j = i - 1;
            while (j >= 0 && neur[j] > v) {
                neur[j + 1] = neur[j];
                --j;
            }
            neur[j + 1] = v;
        }
        for (int i = nn - 1; i >= 0; --i) stack[sp++] = (pending){neur[i], par[neur[i]], 0};
    } else {
        if (child_off[root + 1] == child_off[root]) {
            rc = cs_error_set(CS_ERR_PARSE,
                              "%s:%d: the root sample %lld has no children and is not a soma (type 1): no branches",
                              path, R->line, (long long)R->id);
            goto done;
        }
        for (int k = child_off[root + 1] - 1; k >= child_off[root]; --k)
            stack[sp++] = (pending){child[k], root, -1};
    }

    /* depth-first, parents first, children in file order */
    while (sp > 0) {
        pending it = stack[--sp];
        int last = -1;
        int b = build_branch(&B, it, &last);
        if (b < 0) {
            rc = (cs_status)b;
            goto done;
        }
        for (int k = child_off[last + 1] - 1; k >= child_off[last]; --k)
            stack[sp++] = (pending){child[k], last, b};
    }
    /* NEURON's Import3d attaches the neurites of a one- or three-point soma to soma(0.5) */
    if (soma_kind && opt.neurites_at_soma_centre)
        for (int k = 1; k < out->nbranch; ++k)
            if (out->branches[k].parent == 0) out->branches[k].parent_pos = 0.5;
    rc = CS_OK;

done:
    free(s);
    free(sorted);
    free(par);
    free(child_off);
    free(child);
    free(fill);
    free(stack);
    if (rc != CS_OK) cs_morph_free(out);
    return rc;
}

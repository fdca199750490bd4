"""cablesim's SWC reader (models/cs_swc.c) and CV count (models/cs_geometry.c) in Python.

The same branches, in the same order, with the same points: used by bench/real_cells.py to
count compartments without running cablesim and by bench/neuron_real_cells.py to build the
cells in NEURON. Keep in step with models/cs_swc.c (its header comment is the specification):

- a data line is `id type x y z radius parent`; `#` starts a comment; CR/LF line ends;
  samples in any order; coordinates and radii times `scale` [µm]; radii below `min_radius`
  raised to it;
- single-point soma (root of type 1 without type-1 children) or three-point soma (root of type 1
  with exactly two type-1 children, neither with type-1 children): one soma branch, a cylinder
  of the root's radius r and length 2r along y, centred on the root; every neurite on these
  samples is a child of the soma branch. Any other soma: ordinary branches of tag 1, whose
  parent is -1 when they start at the root;
- branches are maximal unbranched runs of samples of one type; each starts with its attachment
  point (a neurite leaving a soma sample takes its own first radius there); a first sample on
  the attachment point is merged into it (the point takes the sample's radius);
- depth-first, parents first, children in file order.
"""

import math


def read_swc(path, scale=1.0, min_radius=0.0):
    """Branches of an SWC file as cablesim builds them: a list of dicts {parent, tag, points}
    with points a list of (x, y, z, r) [µm], proximal to distal."""
    samples = []  # (id, type, x, y, z, r, parent) in file order
    with open(path, "rb") as f:
        for raw in f.read().decode("latin-1").split("\n"):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            v = line.split()
            if len(v) != 7:
                raise ValueError("%s: expected 7 fields: %r" % (path, raw))
            r = float(v[5]) * scale
            if min_radius > 0:
                r = max(r, min_radius)
            elif r <= 0:
                raise ValueError("%s: radius <= 0 (set min_radius)" % path)
            samples.append((int(float(v[0])), int(float(v[1])), float(v[2]) * scale, float(v[3]) * scale,
                            float(v[4]) * scale, r, int(float(v[6]))))
    n = len(samples)
    index = {s[0]: i for i, s in enumerate(samples)}
    par = [-1 if s[6] < 0 else index[s[6]] for s in samples]
    roots = [i for i in range(n) if par[i] < 0]
    if len(roots) != 1:
        raise ValueError("%s: %d roots" % (path, len(roots)))
    root = roots[0]
    children = [[] for _ in range(n)]
    for i in range(n):
        if par[i] >= 0:
            children[par[i]].append(i)
    typ = [s[1] for s in samples]

    branches = []

    def build(start, attach, parent):
        a = samples[attach]
        ar = samples[start][5] if (a[1] == 1 and typ[start] != 1) else a[5]
        pts = [(a[2], a[3], a[4], ar)]

        def push(p):
            if len(pts) == 1 and pts[0][:3] == p[:3]:
                pts[0] = p
            else:
                pts.append(p)

        c = start
        while True:
            s = samples[c]
            push((s[2], s[3], s[4], s[5]))
            if len(children[c]) != 1 or typ[children[c][0]] != typ[c]:
                break
            c = children[c][0]
        length = sum(math.dist(pts[i - 1][:3], pts[i][:3]) for i in range(1, len(pts)))
        if len(pts) < 2 or not length > 0:
            raise ValueError("%s: zero-length branch at sample %d" % (path, samples[start][0]))
        branches.append({"parent": parent, "tag": typ[start], "points": pts})
        return len(branches) - 1, c

    stack = []
    R = samples[root]
    soma_kind = 0
    side = []
    if R[1] == 1:
        soma_children = [c for c in children[root] if typ[c] == 1]
        ok3 = all(typ[g] != 1 for c in soma_children for g in children[c])
        if not soma_children:
            soma_kind = 1
        elif len(soma_children) == 2 and ok3:
            soma_kind = 3
            side = soma_children
    if soma_kind:
        branches.append({"parent": -1, "tag": 1,
                         "points": [(R[2], R[3] - R[5], R[4], R[5]), (R[2], R[3] + R[5], R[4], R[5])]})
        neur = [c for c in children[root] if c not in side]
        for s in side:
            neur += children[s]
        neur.sort()
        for c in reversed(neur):
            stack.append((c, par[c], 0))
    else:
        if not children[root]:
            raise ValueError("%s: root without children" % path)
        for c in reversed(children[root]):
            stack.append((c, root, -1))
    while stack:
        start, attach, parent = stack.pop()
        b, last = build(start, attach, parent)
        for c in reversed(children[last]):
            stack.append((c, last, b))
    return branches


def branch_length(b):
    p = b["points"]
    return sum(math.dist(p[i - 1][:3], p[i][:3]) for i in range(1, len(p)))


def branch_cvs(b, max_cv_length):
    """CVs of a branch under the max_cv_length policy: ceil(L / max_cv_length), at least 1."""
    return max(1, int(math.ceil(branch_length(b) / max_cv_length)))


def compartments(branches, max_cv_length):
    """Nodes as cablesim counts them (models/cs_geometry.h): one zero-area root node, then per
    branch its CV centre nodes plus one zero-area distal node."""
    return 1 + sum(branch_cvs(b, max_cv_length) + 1 for b in branches)


if __name__ == "__main__":
    import sys

    for p in sys.argv[1:]:
        sc = 0.001 if "flywire" in p else 1.0
        br = read_swc(p, sc, 0.1)
        tags = sorted({b["tag"] for b in br})
        print("%s: %d branches, branch 0 tag %d, tags %s, %d compartments" % (
            p, len(br), br[0]["tag"], tags, compartments(br, 20.0)))

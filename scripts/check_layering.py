#!/usr/bin/env python3
"""The layering check (docs/architecture.md): every C/CUDA file includes only headers of its own
folder or of a lower layer, and no cycle appears between files.

The layer order is written once, in LAYERS below, bottom first. Folders on one line are peers:
each may use the layers below, never a peer (the CPU backend does not include the CUDA one).
Two graphs are checked:
  - includes, from the sources: "a.h" resolved by name (include paths are flat per folder);
    an include from a higher layer or a peer, an unknown header, or a cycle fails;
  - calls between files, from a build's object files (--build DIR, with `nm`): a cycle of .c/.cu
    files that call each other fails (the solver planners once did: cs_hines_plan.c and
    cs_hines_staged.c).
Usage: scripts/check_layering.py [--source DIR] [--build DIR]     exit 0 clean, 1 violations
"""
import argparse
import collections
import glob
import os
import re
import subprocess
import sys

LAYERS = [                       # bottom first; (name, folders)
    ("base", ["base"]),
    ("libraries", ["solver", "mechanisms", "output"]),
    ("models", ["models"]),
    ("core", ["src/core"]),
    ("backends", ["src/backends/cpu", "src/backends/cuda"]),
    ("api", ["src/api"]),
    ("cli", ["src/cli"]),
]
# headers generated at build time, by the folder that owns their template or generator
GENERATED = {"cs_version.h": "src/core", "cs_nmodl_rt.h": "mechanisms"}
GENERATED_PATTERNS = [(re.compile(r"^[a-z0-9_]+_body\.h$"), "mechanisms")]  # nmodl/ output
SUFFIXES = (".c", ".h", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def rank_of(folder):
    for i, (_, folders) in enumerate(LAYERS):
        if folder in folders:
            return i
    return None


def sources(root):
    files = {}
    for _, folders in LAYERS:
        for folder in folders:
            for path in sorted(glob.glob(os.path.join(root, folder, "*"))):
                if path.endswith(SUFFIXES):
                    files[os.path.relpath(path, root)] = folder
    return files


def owner_of(name, by_name):
    if name in by_name:
        return by_name[name]
    if name in GENERATED:
        return GENERATED[name]
    for pattern, folder in GENERATED_PATTERNS:
        if pattern.match(name):
            return folder
    return None


def check_includes(root):
    files = sources(root)
    by_name = {}
    for rel, folder in files.items():
        name = os.path.basename(rel)
        if name in by_name and by_name[name] != folder:
            yield f"{rel}: the header name {name} is also in {by_name[name]}/ (include paths are flat)"
        by_name.setdefault(name, folder)
    graph = collections.defaultdict(set)
    for rel, folder in files.items():
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            name = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            target = owner_of(os.path.basename(name), by_name)
            if target is None:
                yield f"{rel}:{line}: includes \"{name}\", which no layer has"
                continue
            if target != folder:
                mine, theirs = rank_of(folder), rank_of(target)
                if theirs > mine:
                    yield (f"{rel}:{line}: includes \"{name}\" of {target}/ ({LAYERS[theirs][0]}), a layer above "
                           f"{folder}/ ({LAYERS[mine][0]})")
                elif theirs == mine:
                    yield f"{rel}:{line}: includes \"{name}\" of its peer {target}/ ({LAYERS[mine][0]})"
            if os.path.basename(name) in by_name:
                dep = next(r for r in files if os.path.basename(r) == os.path.basename(name))
                graph[rel].add(dep)
    for cycle in cycles(graph):
        yield "include cycle: " + " -> ".join(cycle + [cycle[0]])


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan, iterative), each as a list."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]; counter[0] += 1; stack.append(start); on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def check_calls(build):
    """Cycles of files that call each other, from the library's object files."""
    objs = [o for o in glob.glob(os.path.join(build, "CMakeFiles", "*.dir", "**", "*.o"), recursive=True)
            if re.search(r"CMakeFiles/(cs_[a-z_]+|cablesim_solver)\.dir/", o)]
    if not objs:
        yield f"{build}: no object files of the library's layers (build it first)"
        return
    defined, undefined = {}, collections.defaultdict(set)
    for o in objs:
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defined[parts[2]] = o
            elif len(parts) == 2 and parts[0] == "U":
                undefined[o].add(parts[1])
    name = lambda o: re.sub(r"^.*CMakeFiles/[^/]+\.dir/", "", o)[:-2]
    graph = {name(o): {name(defined[s]) for s in undefined[o] if s in defined and defined[s] != o} for o in objs}
    for cycle in cycles(graph):
        yield "files that call each other: " + " -> ".join(cycle + [cycle[0]])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--build", help="a build folder: also check calls between its object files for cycles")
    a = ap.parse_args()
    problems = list(check_includes(os.path.abspath(a.source)))
    if a.build:
        problems += list(check_calls(a.build))
    for p in problems:
        print("layering:", p)
    nfiles = len(sources(os.path.abspath(a.source)))
    print(f"layering: {nfiles} files in {len(LAYERS)} layers, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

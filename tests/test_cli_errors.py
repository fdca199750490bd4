#!/usr/bin/python3
"""Command-line behaviour of cablesim on bad input, and its good paths.

Every bad input must end with exactly one line on stderr naming the file and line (or the JSON
path / cell / option), a non-zero exit that is not a signal, no crash report, within a timeout,
and no output file left behind when nothing was simulated. A run that fails part-way must leave
an HDF5 file marked status = "incomplete" whose samples written before the failure are finite.

Usage: test_cli_errors.py --cablesim PATH --source-dir DIR --work-dir DIR
Prints one line per check and a final 'N passed, N failed'; exits 1 on any failure.
"""
import argparse
import copy
import json
import math
import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np

TIMEOUT = 30.0  # [s] a hang is a failure
CRASH_WORDS = ("Segmentation", "Abort", "AddressSanitizer", "runtime error", "Traceback",
               "core dumped", "LeakSanitizer")

# A small valid model: one soma-only HH cell, a current clamp, a detector and a probe, 5 ms.
BASE = {
    "run": {"tfinal": 5.0, "dt": 0.025},
    "populations": [
        {
            "name": "cell",
            "count": 1,
            "morphology": {"generator": "soma", "radius": 9.4},
            "biophysics": {
                "cm": 1.0, "Ra": 100.0, "v_init": -65.0,
                "mechanisms": [{"name": "hh", "region": "all"}],
            },
            "stimuli": [
                {"mechanism": "iclamp", "location": {"branch": 0, "pos": 0.5}, "cells": "all",
                 "params": {"delay": 1.0, "duration": 2.0, "amplitude": 1.0}}
            ],
            "detector": {"location": {"branch": 0, "pos": 0.5}, "threshold": -10.0},
            "probes": {"cells": "all", "locations": [{"branch": 0, "pos": 0.5}], "interval": 0.1},
        }
    ],
}

# The line each known invalid SWC file must be blamed on (others: any line).
SWC_BAD_LINE = {
    "morphio_bad_syntax.swc": "6",                       # 'asd asda'
    "morphio_multiple_soma.swc": "11",                   # the second root, sample 10
    "morphio_single_section_missing_segment.swc": "1",   # sample 5, whose parent 4 is absent
    "neurom_repeated_id.swc": "6",                       # the second sample 4
}


class Checker:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            print(f"PASS {name}")
        else:
            self.failed += 1
            print(f"FAIL {name}: {detail}")
        sys.stdout.flush()
        return ok


def run(cmd, cwd):
    """(returncode or None on timeout, stdout, stderr)."""
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace",
                           timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return None, out, err


def write_model(work, name, model):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        if isinstance(model, str):
            f.write(model)
        else:
            json.dump(model, f, indent=2)
    return path


def base():
    return copy.deepcopy(BASE)


def pop(m):
    return m["populations"][0]


class Cli:
    def __init__(self, exe, work, chk):
        self.exe = exe
        self.work = work
        self.chk = chk

    def expect_error(self, name, args, must=(), regex=(), out=None, cwd=None, out_is_dir=False):
        """Run `cablesim args`; it must fail cleanly with one stderr line containing every string
        of `must` and matching every pattern of `regex`; `out` (if given) must not exist after."""
        if out is not None and not out_is_dir and os.path.exists(out):
            os.remove(out)
        rc, so, se = run([self.exe] + args, cwd or self.work)
        c = self.chk
        lines = [l for l in se.splitlines() if l.strip()]
        msg = lines[0] if lines else ""
        ok = True
        if rc is None:
            return c.check(f"{name}: finishes within {TIMEOUT:.0f} s", False, "timed out (hang)")
        everything = so + se
        crash = [w for w in CRASH_WORDS if w in everything]
        problems = []
        if rc <= 0:
            problems.append(f"exit status {rc} (want > 0; < 0 is a signal)")
        if crash:
            problems.append(f"crash report {crash}")
        if len(lines) != 1:
            problems.append(f"{len(lines)} lines on stderr (want exactly 1): {se!r}")
        for s in must:
            if s not in msg:
                problems.append(f"message lacks {s!r}")
        for r in regex:
            if not re.search(r, msg):
                problems.append(f"message does not match /{r}/")
        if out is not None and not out_is_dir and os.path.exists(out):
            problems.append(f"output file {out} left behind although nothing was simulated")
        if out_is_dir and not os.path.isdir(out):
            problems.append(f"output directory {out} was replaced")
        ok = not problems
        c.check(f"{name}: rc={rc} msg={msg!r}", ok, "; ".join(problems))
        return ok

    def run_model(self, name, model, must=(), regex=(), extra=(), names_model=True):
        """A bad model written as <name>.json in the work dir; the message must name it (unless
        the fault lies in another file that the message names instead)."""
        fname = f"{name}.json"
        path = write_model(self.work, fname, model)
        out = os.path.join(self.work, f"{name}.h5")
        return self.expect_error(name, ["run", path, "-o", out, "-q"] + list(extra),
                                 must=((fname,) if names_model else ()) + tuple(must), regex=regex, out=out)


def blowup(chk, exe, work, amp):
    """An iclamp of `amp` nA from t = 10 ms: the run must stop with one line naming the cell and
    the time, and leave an 'incomplete' file with the finite samples from before the failure."""
    m = base()
    m["run"]["tfinal"] = 20.0
    pop(m)["stimuli"][0]["params"] = {"delay": 10.0, "duration": 5.0, "amplitude": amp}
    name = f"blowup_{amp:g}"
    path = write_model(work, name + ".json", m)
    out = os.path.join(work, name + ".h5")
    rc, so, se = run([exe, "run", path, "-o", out, "-q"], work)
    lines = [l for l in se.splitlines() if l.strip()]
    msg = lines[0] if lines else ""
    problems = []
    if rc is None:
        problems.append("timed out")
    elif rc <= 0:
        problems.append(f"exit status {rc}")
    if len(lines) != 1:
        problems.append(f"{len(lines)} stderr lines: {se!r}")
    if [w for w in CRASH_WORDS if w in so + se]:
        problems.append("crash report")
    if "cell" not in msg:
        problems.append("message does not name the cell")
    tm = re.search(r"t\s*=\s*([0-9.eE+-]+)", msg)
    if not tm:
        problems.append("message does not give the time as 't = ...'")
    else:
        try:
            t = float(tm.group(1).rstrip("."))
            if not (10.0 <= t <= 10.5):
                problems.append(f"time {t} ms is not just after the clamp starts at 10 ms")
        except ValueError:
            problems.append(f"time {tm.group(1)!r} is not a number")
    chk.check(f"iclamp {amp:g} nA: run stops with a message: rc={rc} msg={msg!r}", not problems,
              "; ".join(problems))
    problems = []
    if not os.path.exists(out):
        problems.append("no output file")
    else:
        try:
            with h5py.File(out, "r") as f:
                status = f.attrs.get("status")
                if isinstance(status, bytes):
                    status = status.decode()
                if status != "incomplete":
                    problems.append(f"status {status!r}, want 'incomplete'")
                data = f["report/cell/data"][:]
                tstart, tstop, dt = f["report/cell/mapping/time"][:]
                bad = ~np.isfinite(data)
                if bad.any():
                    first = tstart + dt * np.argmax(bad.any(axis=1))
                    problems.append(f"{bad.sum()} non-finite samples in the file (from t = {first:g} ms)")
                if tstart + data.shape[0] * dt > 10.5 + 1e-9:
                    problems.append(f"{data.shape[0]} rows reach past the failure at ~10 ms")
                if abs(tstop - (tstart + data.shape[0] * dt)) > 1e-6:
                    problems.append(f"mapping/time tstop {tstop} does not describe the {data.shape[0]} rows")
        except Exception as e:  # noqa: BLE001 -- any failure to read is the finding
            problems.append(f"h5py cannot read it: {e}")
    chk.check(f"iclamp {amp:g} nA: leaves a readable 'incomplete' file with finite samples", not problems,
              "; ".join(problems))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()
    exe = os.path.abspath(a.cablesim)
    work = os.path.abspath(a.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    chk = Checker()
    cli = Cli(exe, work, chk)

    # ---- the base model is valid (otherwise every error case below proves nothing) ----
    good = write_model(work, "good.json", base())
    out = os.path.join(work, "good.h5")
    rc, so, se = run([exe, "run", good, "-o", out, "-q"], work)
    ok = rc == 0 and os.path.exists(out)
    if ok:
        with h5py.File(out, "r") as f:
            ok = f.attrs["status"] == "complete" and f["report/cell/data"].shape[0] > 0
    chk.check("base model runs (rc 0, complete file)", ok, f"rc={rc} stderr={se!r}")

    # ---- invalid SWC files: message names the file and a line ----
    inval = os.path.normpath(os.path.join(a.source_dir, "..", "shared", "data", "morphologies", "invalid"))
    swcs = sorted(f for f in os.listdir(inval)) if os.path.isdir(inval) else []
    chk.check(f"invalid SWC files found in {inval}", len(swcs) > 0, "none")
    for s in swcs:
        shutil.copy(os.path.join(inval, s), os.path.join(work, s))
        m = base()
        pop(m)["morphology"] = {"swc": s}  # relative to the model file's folder
        line = SWC_BAD_LINE.get(s, r"\d+")
        cli.run_model(f"swc_{os.path.splitext(s)[0]}", m, must=(s,), regex=(re.escape(s) + ":" + line + r"\b",),
                      names_model=False)

    # ---- JSON syntax errors: file:line:column ----
    txt = json.dumps(base(), indent=2)
    lines = txt.split("\n")
    # missing comma: drop the comma after the "tfinal" value (line 3 of the file, 1-based)
    i = next(k for k, l in enumerate(lines) if '"tfinal"' in l)
    bad = lines[:]
    bad[i] = bad[i].rstrip(",")
    # the parser notices at the next token, on the next line
    cli.run_model("json_missing_comma", "\n".join(bad),
                  regex=(r"json_missing_comma\.json:(%d|%d):\d+" % (i + 1, i + 2),))
    cli.run_model("json_trailing_garbage", txt + "\n}\n",
                  regex=(r"json_trailing_garbage\.json:%d:\d+" % (len(lines) + 1),))
    j = next(k for k, l in enumerate(lines) if '"name": "cell"' in l)
    bad = lines[:]
    bad[j] = bad[j].replace('"cell"', '"cell')
    cli.run_model("json_unterminated_string", "\n".join(bad), regex=(r"json_unterminated_string\.json:\d+:\d+",))
    cli.run_model("json_empty", "", regex=(r"json_empty\.json:\d+:\d+",))

    # ---- unknown names ----
    m = base()
    pop(m)["biophysics"]["mechanisms"][0]["name"] = "hhx"
    cli.run_model("unknown_mechanism", m, must=("hhx",))
    m = base()
    pop(m)["biophysics"]["mechanisms"][0]["params"] = {"gnabarr": 0.1}
    cli.run_model("unknown_mech_param", m, must=("gnabarr",))
    m = base()
    pop(m)["stimuli"][0]["params"]["amplitud"] = 1.0
    cli.run_model("unknown_stim_param", m, must=("amplitud",))
    m = base()
    m["runn"] = {}
    cli.run_model("unknown_key_top", m, must=("runn",))
    m = base()
    pop(m)["biophysic"] = pop(m).pop("biophysics")
    cli.run_model("unknown_key_population", m, must=("biophysic",))
    m = base()
    m["run"]["dtt"] = 0.1
    cli.run_model("unknown_key_run", m, must=("dtt",))

    # ---- bad numbers in the JSON: zero, negative, non-finite (1e999 parses as inf) ----
    def set_run(m, k, v):
        m["run"][k] = v

    def set_morph(m, k, v):
        pop(m)["morphology"] = {"generator": "cable", "length": 100.0, "radius": 1.0}
        pop(m)["morphology"][k] = v

    def set_bio(m, k, v):
        pop(m)["biophysics"][k] = v

    numbers = [("dt", set_run), ("tfinal", set_run), ("radius", set_morph), ("length", set_morph),
               ("Ra", set_bio)]
    for key, setter in numbers:
        for label, val in (("zero", 0), ("negative", -1.0), ("inf", "INF"), ("neginf", "-INF")):
            m = base()
            setter(m, key, 12345.0 if val == "INF" or val == "-INF" else val)
            model = json.dumps(m, indent=2)
            if val in ("INF", "-INF"):
                model = model.replace("12345.0", "1e999" if val == "INF" else "-1e999")
                assert "1e999" in model
            cli.run_model(f"num_{key}_{label}", model, must=(key,))
    # radius of a soma too
    for label, val in (("zero", 0), ("negative", -2.0)):
        m = base()
        pop(m)["morphology"]["radius"] = val
        cli.run_model(f"num_soma_radius_{label}", m, must=("radius",))

    # where a branch attaches on its parent (NEURON's child.connect(parent(x))): in [0, 1], and not on a root
    two = [{"parent": -1, "length": 20.0, "radius": 10.0, "tag": "soma"},
           {"parent": 0, "length": 100.0, "radius": 1.0, "tag": "dend"}]
    for label, idx, val, must in (("above_1", 1, 1.5, ("parent_pos", "1.5")), ("negative", 1, -0.1, ("parent_pos",)),
                                  ("on_root", 0, 0.5, ("parent_pos", "root"))):
        m = base()
        pop(m)["morphology"] = {"branches": [dict(b) for b in two]}
        pop(m)["morphology"]["branches"][idx]["parent_pos"] = val
        cli.run_model(f"parent_pos_{label}", m, must=must + (f"branches[{idx}]",))

    # ---- bad numbers on the command line ----
    for opt in ("--dt", "--tfinal"):
        for val in ("0", "-1", "nan", "abc", "inf", "1e999"):
            out = os.path.join(work, "cli.h5")
            cli.expect_error(f"option {opt} {val}", ["run", good, "-o", out, "-q", opt, val],
                             must=(opt, val), out=out)

    # ---- probes.variables (issue 20 item 4): unknown variables, variables absent at a location ----
    def with_vars(vs, locs=None, mechs=None):
        m = base()
        pop(m)["probes"]["variables"] = vs
        if locs is not None:
            pop(m)["probes"]["locations"] = locs
        if mechs is not None:
            pop(m)["biophysics"]["mechanisms"] = mechs
        return m
    cli.run_model("var_unknown", with_vars(["v", "foo"]), must=("cell", "foo", "unknown variable"))
    cli.run_model("var_no_mech", with_vars(["kv.m"]), must=("cell", "kv.m", "'kv'"))
    cli.run_model("var_no_state", with_vars(["hh.q"]), must=("cell", "hh.q", "no state 'q'", "m, h, n"))
    cli.run_model("var_twice", with_vars(["hh.m", "hh.m"]), must=("cell", "hh.m", "twice"))
    cli.run_model("var_not_string", with_vars(["v", 3]), must=("variables[1]",))
    cli.run_model("var_empty", with_vars([]), must=("variables",))
    cli.run_model("var_folded", with_vars(["pas.i"], mechs=[{"name": "pas"}]), must=("cell", "pas.i", "folded"))
    # hh on the soma only: hh.m at the dendrite, and an ion current nothing writes
    bs = {"generator": "ball_and_stick", "soma_radius": 9.0, "dend_length": 100.0, "dend_radius": 1.0,
          "dend_cvs": 2}
    m = with_vars(["hh.m"], locs=[{"branch": 0, "pos": 0.5}, {"branch": 1, "pos": 0.5}],
                  mechs=[{"name": "hh", "region": "soma"}, {"name": "pas", "region": "dend"}])
    pop(m)["morphology"] = bs
    cli.run_model("var_absent_dend", m, must=("'cell'", "hh.m", "does not exist", "branch 1"))
    cli.run_model("var_ion_absent", with_vars(["ina"]), must=("'cell'", "ina", "does not exist", "writes"))
    m = with_vars(["syn.g"])  # no synapse 'syn'
    cli.run_model("var_no_synapse", m, must=("cell", "syn.g", "'syn'"))
    m = base()
    pop(m)["probes"]["variables"] = ["stim.amplitude"]
    pop(m)["stimuli"][0]["name"] = "stim"
    cli.run_model("var_param_not_state", m, must=("stim.amplitude", "no state 'amplitude'"))

    # ---- locations that do not exist ----
    m = base()
    pop(m)["probes"]["locations"] = [{"branch": 5, "pos": 0.5}]
    cli.run_model("probe_branch_5", m, must=("probe",), regex=(r"\b5\b",))
    m = base()
    pop(m)["probes"]["locations"] = [{"branch": 0, "pos": 1.5}]
    cli.run_model("probe_pos_1.5", m, must=("probes", "1.5"))
    m = base()
    pop(m)["stimuli"][0]["location"] = {"branch": 5, "pos": 0.5}
    cli.run_model("stimulus_branch_5", m, must=("stimul",), regex=(r"\b5\b",))
    m = base()
    pop(m)["stimuli"][0]["location"] = {"branch": 0, "pos": 1.5}
    cli.run_model("stimulus_pos_1.5", m, must=("stimuli", "1.5"))
    m = base()
    pop(m)["detector"]["location"] = {"branch": 5, "pos": 0.5}
    cli.run_model("detector_branch_5", m, must=("detector",), regex=(r"\b5\b",))
    m = base()
    pop(m)["stimuli"][0]["cells"] = [3]
    cli.run_model("stimulus_cell_3_of_1", m, must=("stimuli[0]", "cells[0]"))

    # ---- model size limits (models/cs_model.h): one line naming the model and the limit, found
    # while parsing, before any per-cell or per-connection memory is taken (these models would
    # need ~100 GB and ~3 GB; the run is limited to 1 GB of address space to prove it) ----
    def small_pop(name, count):
        p = {"name": name, "count": count, "morphology": {"generator": "soma", "radius": 9.4},
             "biophysics": {"cm": 1.0, "Ra": 100.0, "v_init": -65.0,
                            "mechanisms": [{"name": "hh", "region": "all"}]},
             "synapses": [{"name": "syn", "mechanism": "expsyn", "location": {"branch": 0, "pos": 0.5}}],
             "detector": {"location": {"branch": 0, "pos": 0.5}, "threshold": -10.0}}
        return p

    asan = "libasan" in subprocess.run(["ldd", exe], capture_output=True, text=True).stdout

    def limited(name, model, must):
        path = write_model(work, f"{name}.json", model)
        out = os.path.join(work, f"{name}.h5")
        cmd = [exe, "run", path, "-o", out, "-q"]
        if not asan:  # AddressSanitizer reserves terabytes of address space for its shadow
            cmd = ["/bin/sh", "-c", 'ulimit -v 1048576 && exec "$0" "$@"'] + cmd
        rc, so, se = run(cmd, work)
        lines = [l for l in se.splitlines() if l.strip()]
        msg = lines[0] if lines else ""
        problems = []
        if rc != 1:
            problems.append(f"exit status {rc} (want 1)")
        if len(lines) != 1:
            problems.append(f"{len(lines)} lines on stderr (want exactly 1): {se[-400:]!r}")
        for s in (f"{name}.json",) + tuple(must):
            if s not in msg:
                problems.append(f"message lacks {s!r}")
        if [w for w in CRASH_WORDS if w in so + se] or "out of memory" in se:
            problems.append("crash report or out of memory")
        if os.path.exists(out):
            problems.append("output file left behind")
        chk.check(f"{name}: rc={rc} msg={msg!r}", not problems, "; ".join(problems))

    m = {"run": {"tfinal": 1.0, "dt": 0.025}, "populations": [small_pop("big", 10_000_001)]}
    limited("limit_cells_one_population", m, ("count", "10000000"))
    m = {"run": {"tfinal": 1.0, "dt": 0.025},
         "populations": [small_pop("a", 6_000_000), small_pop("b", 4_000_001)]}
    limited("limit_cells_all_populations", m, ("populations[1]", "10000001 cells", "limit of 10000000"))
    # 20 000 cells x indegree 5 001 = 100 020 000 connections
    m = {"run": {"tfinal": 1.0, "dt": 0.025}, "populations": [small_pop("p", 20_000)],
         "connections": [{"type": "random", "source": "p", "target": "p", "synapse": "syn",
                          "indegree": 5001, "weight": 0.01, "delay": 1.0}]}
    limited("limit_connections_random", m, ("connections[0]", "indegree 5001", "limit of 100000000"))
    # the limit counts the rules before: a ring's 20 001 + 20 001 x 4 999 = 100 005 000
    # (the random rule alone, 99 984 999, is under the limit)
    m = {"run": {"tfinal": 1.0, "dt": 0.025}, "populations": [small_pop("p", 20_001)],
         "connections": [{"type": "ring", "population": "p", "synapse": "syn", "weight": 0.01, "delay": 1.0},
                         {"type": "random", "source": "p", "target": "p", "synapse": "syn",
                          "indegree": 4999, "weight": 0.01, "delay": 1.0}]}
    limited("limit_connections_after_ring", m, ("connections[1]", "limit of 100000000"))

    # ---- inputs that once crashed the fuzzers (fuzz/regressions/model/): a clean one-line error
    # naming the file (newline_in_key.json: a key with a raw newline was echoed into the message) ----
    regdir = os.path.join(os.path.abspath(a.source_dir), "fuzz", "regressions", "model")
    regs = sorted(os.listdir(regdir)) if os.path.isdir(regdir) else []
    chk.check(f"fuzz regressions found in {regdir}", "newline_in_key.json" in regs, f"{regs}")
    for r in regs:
        out = os.path.join(work, "regression.h5")
        cli.expect_error(f"fuzz regression {r}", ["run", os.path.join(regdir, r), "-o", out, "-q"],
                         must=(r,), out=out)

    # ---- artificial cells (issue 27): one line naming the model and the value ----
    def art_model(art, weight=1.0, target_syn=None):
        m = base()
        m["populations"].append({"name": "art", "count": 2, "artificial": art})
        tgt = {"population": "art", "cell": 1}
        if target_syn:
            tgt["synapse"] = target_syn
        m["connections"] = [{"type": "explicit", "source": {"population": "art", "cell": 0}, "target": tgt,
                             "weight": weight, "delay": 1.0}]
        return m
    cli.run_model("art_noise", art_model({"mechanism": "NetStim", "params": {"noise": 0.5}}),
                  must=("noise", "NetStim", "out of range"))
    cli.run_model("art_not_artificial", art_model({"mechanism": "hh"}), must=("'hh'", "not an artificial cell"))
    cli.run_model("art_weights", art_model({"mechanism": "IntFire1"}, weight=[0.5, 1.0]),
                  must=("2 weights", "IntFire1", "takes 1"))
    cli.run_model("art_synapse", art_model({"mechanism": "IntFire1"}, target_syn="syn"),
                  must=("'art'", "no synapses"))
    cli.run_model("art_times_descend", art_model({"mechanism": "VecStim", "times": [[1.0, 0.5], []]}),
                  must=("times[0][1]", "ascend"))
    with open(os.path.join(work, "bad_times.txt"), "w") as f:
        f.write("# cell time\n0 1.5\n1 2.0\n1 x\n")
    cli.run_model("art_times_file", art_model({"mechanism": "VecStim", "times_file": "bad_times.txt"}),
                  must=("bad_times.txt:4:", "CELL TIME"), names_model=False)
    m = base()
    pop(m)["synapses"] = [{"name": "syn", "mechanism": "IntFire1", "location": {"branch": 0, "pos": 0.5}}]
    cli.run_model("art_as_synapse", m, must=("IntFire1", "artificial cell"))

    # ---- missing files ----
    m = base()
    pop(m)["morphology"] = {"swc": "no_such_cell.swc"}
    cli.run_model("missing_swc", m, must=("no_such_cell.swc",), names_model=False)
    out = os.path.join(work, "missing.h5")
    cli.expect_error("missing model file", ["run", os.path.join(work, "no_such_model.json"), "-o", out, "-q"],
                     must=("no_such_model.json",), out=out)

    # ---- unwritable output ----
    cli.expect_error("output in a missing folder", ["run", good, "-o", "/nonexistent/dir/out.h5", "-q"],
                     must=("/nonexistent/dir/out.h5",), out="/nonexistent/dir/out.h5")
    d = os.path.join(work, "outdir")
    os.makedirs(d, exist_ok=True)
    cli.expect_error("output is a directory", ["run", good, "-o", d, "-q"], must=("outdir",), out=d,
                     out_is_dir=True)

    # ---- a run that blows up part-way ----
    # 1e308 nA: V overflows double precision at the first step of the clamp (t = 10.025 ms).
    # 1e300 nA: V reaches ~1e300 mV, finite in double but not representable in the float32 report
    # (it would be written as inf); nonsense physically, so it must stop the run as well.
    for amp in (1e308, 1e300):
        blowup(chk, exe, work, amp)

    # ---- command-line mistakes ----
    out = os.path.join(work, "opt.h5")
    cli.expect_error("unknown option", ["run", good, "-o", out, "--frobnicate"], must=("--frobnicate",), out=out)
    cli.expect_error("unknown short option", ["run", good, "-o", out, "-Z"], must=("-Z",), out=out)
    cli.expect_error("missing value for --dt", ["run", good, "-o", out, "--dt"], must=("--dt",), out=out)
    cli.expect_error("missing value for -o", ["run", good, "-o"], must=("-o",))
    cli.expect_error("missing value for --threads", ["run", good, "-o", out, "--threads"], must=("--threads",),
                     out=out)
    cli.expect_error("bad --threads", ["run", good, "-o", out, "--threads", "x"], must=("--threads",), out=out)
    cli.expect_error("unknown command", ["frobnicate"], must=("frobnicate",))
    cli.expect_error("run without a model", ["run"], must=("run",))
    cli.expect_error("run with two models", ["run", good, good, "-o", out], must=("run",), out=out)
    cli.expect_error("unknown backend", ["run", good, "-o", out, "-q", "--backend", "quantum"],
                     must=("quantum",), out=out)

    # ---- --no-clobber: an existing output is kept, byte for byte; without it, overwritten ----
    kept = os.path.join(work, "kept.h5")
    with open(kept, "wb") as f:
        f.write(b"not an HDF5 file")
    cli.expect_error("--no-clobber with an existing output", ["run", good, "-o", kept, "-q", "--no-clobber"],
                     must=("kept.h5", "--no-clobber"))
    with open(kept, "rb") as f:
        chk.check("--no-clobber leaves the existing file untouched", f.read() == b"not an HDF5 file")
    fresh = os.path.join(work, "fresh.h5")
    if os.path.exists(fresh):
        os.remove(fresh)
    rc, so, se = run([exe, "run", good, "-o", fresh, "-q", "--no-clobber"], work)
    chk.check("--no-clobber with a new output file runs", rc == 0 and os.path.exists(fresh), f"rc={rc} {se!r}")
    rc, so, se = run([exe, "run", good, "-o", kept, "-q"], work)
    ok = rc == 0
    if ok:
        with h5py.File(kept, "r") as f:
            ok = f.attrs["status"] == "complete"
    chk.check("without --no-clobber an existing file is overwritten", ok, f"rc={rc} {se!r}")

    # ---- good paths ----
    rc, so, se = run([exe, "--help"], work)
    chk.check("--help exits 0 and prints usage mentioning 'run'",
              rc == 0 and "Usage" in so and "run" in so, f"rc={rc} stdout={so[:200]!r}")
    rc, so, se = run([exe, "--version"], work)
    chk.check(f"--version prints a version ({so.strip()!r})",
              rc == 0 and re.search(r"\d+\.\d+", so) is not None, f"rc={rc} stdout={so!r}")
    default_out = os.path.join(work, "cablesim-out.h5")
    if os.path.exists(default_out):
        os.remove(default_out)
    rc, so, se = run([exe], work)
    problems = []
    if rc != 0:
        problems.append(f"rc={rc} stderr={se[-500:]!r}")
    if not os.path.exists(default_out):
        problems.append("no cablesim-out.h5 in the working directory")
    else:
        with h5py.File(default_out, "r") as f:
            status = f.attrs.get("status")
            nspk = sum(g["timestamps"].shape[0] for g in f["spikes"].values())
            if status != "complete":
                problems.append(f"status {status!r}")
            if nspk < 1:
                problems.append("no spikes")
    chk.check("default run (no arguments) exits 0 and writes a complete cablesim-out.h5 with spikes",
              not problems, "; ".join(problems))

    # --backend auto takes the GPU when there is one, else the CPU: either way the run works and
    # the file says which backend ran (the CUDA test compares the two where a GPU exists)
    auto_out = os.path.join(work, "auto.h5")
    rc, so, se = run([exe, "run", good, "-o", auto_out, "-q", "--backend", "auto"], work)
    backend = None
    if rc == 0 and os.path.exists(auto_out):
        with h5py.File(auto_out, "r") as f:
            backend = f["metadata"].attrs.get("backend")
            backend = backend.decode() if isinstance(backend, bytes) else backend
    chk.check(f"--backend auto runs (backend {backend!r})", rc == 0 and backend in ("cpu", "cuda"),
              f"rc={rc} stderr={se[-300:]!r} backend={backend!r}")

    print(f"{chk.passed} passed, {chk.failed} failed")
    return 1 if chk.failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Bad NMODL input and bad catalogues: one line naming the file (and line), exit 1.

1. constructs outside the subset and malformed files: `cablesim build-catalogue` prints
   "cablesim: error: FILE:LINE: ..." (the line of the construct), exit 1, no traceback;
2. a model whose catalogue is missing, not a catalogue, of another ABI version, or defines a
   name already taken: one line naming the model file, exit 1;
3. a fuzz of the reader: 400 seeded mutations of the real .mod files of tests/data/mod (tokens
   and lines deleted, duplicated, swapped; characters inserted): each either compiles or raises
   the reader's one-line FILE:LINE error, never another exception.

Usage: test_nmodl_errors.py --cablesim PATH --source-dir DIR --work-dir DIR
"""

import argparse
import glob
import os
import random
import shutil
import subprocess
import sys

GOOD_HEAD = """NEURON {
    SUFFIX bad
    NONSPECIFIC_CURRENT i
    RANGE g
}
PARAMETER { g = 0.001 (S/cm2) }
ASSIGNED { v (mV) i (mA/cm2) }
STATE { m }
"""

# (name, text, line, words the message must contain)
CASES = [
    ("kinetic_nonlinear", GOOD_HEAD.replace("STATE { m }", "STATE { m n o }") +
     "BREAKPOINT { SOLVE k METHOD sparse\n i = g*v }\nKINETIC k {\n ~ m + n <-> o (1, 1)\n}\n", 12,
     ["more than one state a side", "not supported"]),
    ("kinetic_rate", GOOD_HEAD.replace("STATE { m }", "STATE { m n }") +
     "BREAKPOINT { SOLVE k METHOD sparse\n i = g*v }\nKINETIC k {\n ~ m <-> n (m, 1)\n}\n", 12,
     ["depends on a STATE", "not supported"]),
    ("sparse_derivative", GOOD_HEAD + "BREAKPOINT { SOLVE s METHOD sparse\n i = g*m*v }\nDERIVATIVE s {\n m' = -m\n}\n",
     9, ["not a KINETIC block"]),
    ("nonlinear_block", GOOD_HEAD + "BREAKPOINT { i = g*v }\nNONLINEAR l {\n}\n", 10, ["NONLINEAR block", "not supported"]),
    ("linear_count", GOOD_HEAD.replace("STATE { m }", "STATE { m n }") +
     "BREAKPOINT { i = g*m*v }\nINITIAL { SOLVE l }\nLINEAR l {\n ~ m + n = 1\n}\n", 10, ["LINEAR l", "1 equations in 2 states"]),
    ("method_euler", GOOD_HEAD + "BREAKPOINT { SOLVE s METHOD euler\n i = g*m*v }\nDERIVATIVE s {\n m' = -m\n}\n",
     9, ["METHOD euler", "not supported"]),
    ("verbatim", GOOD_HEAD + "BREAKPOINT { i = g*v }\nVERBATIM\n int x;\nENDVERBATIM\n", 10,
     ["VERBATIM", "not supported"]),
    ("concentration_point", "NEURON {\n POINT_PROCESS c\n USEION ca READ ica WRITE cai\n}\nBREAKPOINT { }\n", 3,
     ["POINT_PROCESS writing an ion concentration", "not supported"]),
    ("ion_variable", "NEURON {\n SUFFIX c\n USEION ca READ cax WRITE ica\n}\nBREAKPOINT { ica = 0 }\n", 3,
     ["cax", "not a variable of the ion ca"]),
    ("valence", "NEURON {\n SUFFIX c\n USEION ca READ cai VALENCE 1\n}\n", 3, ["VALENCE 1", "not supported"]),
    ("net_send", "NEURON { POINT_PROCESS P\n NONSPECIFIC_CURRENT i }\nASSIGNED { i }\nBREAKPOINT { i = 0 }\n"
     "NET_RECEIVE(w) {\n net_send(1, 1)\n}\n", 6, ["net_send", "not supported"]),
    ("nonlinear", GOOD_HEAD + "BREAKPOINT { SOLVE s METHOD cnexp\n i = g*m*v }\nDERIVATIVE s {\n m' = -m*m\n}\n",
     12, ["not linear in m", "not supported"]),
    ("pointer", "NEURON {\n SUFFIX p\n POINTER x\n}\n", 3, ["POINTER", "not supported"]),
    ("unterminated", GOOD_HEAD + "BREAKPOINT {\n i = g*v\n", 11, ["unterminated"]),
    ("undeclared", GOOD_HEAD + "BREAKPOINT {\n i = g*(v - erev)\n}\n", 10, ["'erev'", "not declared"]),
    ("array", "NEURON { SUFFIX a\n NONSPECIFIC_CURRENT i }\nASSIGNED { i x[3] }\nBREAKPOINT { i = 0 }\n", 3,
     ["array", "not supported"]),
    ("function_table", GOOD_HEAD + "BREAKPOINT { i = g*v }\nFUNCTION_TABLE tab(v)\n", 10,
     ["FUNCTION_TABLE", "not supported"]),
    ("no_suffix", "PARAMETER { g = 1 }\n", 1, ["no SUFFIX"]),
    ("syntax", GOOD_HEAD + "BREAKPOINT {\n i = g*(v - \n}\n", 11, ["unexpected '}'"]),
    ("coupled", GOOD_HEAD.replace("STATE { m }", "STATE { m n }") +
     "BREAKPOINT { SOLVE s METHOD derivimplicit\n i = g*m*v }\nDERIVATIVE s {\n m' = n*m - m\n n' = -n\n}\n", 12,
     ["not linear in its states", "not supported"]),
    ("ion_other", "NEURON { SUFFIX x\n USEION cl READ ecl WRITE icl }\n", 2, ["ion 'cl'", "not supported"]),
    # events (issue 27): net_send and friends are for ARTIFICIAL_CELLs, in INITIAL and NET_RECEIVE
    ("net_event_point", "NEURON { POINT_PROCESS P\n NONSPECIFIC_CURRENT i }\nASSIGNED { i }\nBREAKPOINT { i = 0 }\n"
     "NET_RECEIVE(w) {\n net_event(t)\n}\n", 6, ["net_event", "outside an ARTIFICIAL_CELL"]),
    ("artificial_v", "NEURON { ARTIFICIAL_CELL A }\nASSIGNED { x }\nNET_RECEIVE(w) {\n x = v\n}\n", 4,
     ["'v'", "ARTIFICIAL_CELL"]),
    ("artificial_current", "NEURON { ARTIFICIAL_CELL A\n NONSPECIFIC_CURRENT i }\nNET_RECEIVE(w) { }\n", 1,
     ["ARTIFICIAL_CELL with ions or currents", "not supported"]),
    ("net_send_procedure", "NEURON { ARTIFICIAL_CELL A }\nPROCEDURE p() {\n net_send(1, 1)\n}\n"
     "NET_RECEIVE(w) { p() }\n", 3, ["net_send", "outside INITIAL and NET_RECEIVE"]),
    ("flag_point", "NEURON { POINT_PROCESS P\n NONSPECIFIC_CURRENT i }\nASSIGNED { i }\nBREAKPOINT { i = 0 }\n"
     "NET_RECEIVE(w) {\n if (flag == 1) { }\n}\n", 6, ["'flag'", "not supported"]),
]


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()
    work = os.path.abspath(a.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    fails = 0

    def check(ok, what, detail=""):
        nonlocal fails
        print("%s %s %s" % ("PASS" if ok else "FAIL", what, detail))
        fails += not ok

    # 1. FILE:LINE errors
    for name, text, line, words in CASES:
        d = os.path.join(work, name)
        os.makedirs(d)
        path = os.path.join(d, name + ".mod")
        with open(path, "w") as f:
            f.write(text)
        p = run([a.cablesim, "build-catalogue", d, "-o", os.path.join(d, "x.so"), "--cuda", "off"])
        err = p.stderr.strip()
        want = "cablesim: error: %s:%d: " % (path, line)
        check(p.returncode == 1 and err.startswith(want) and "\n" not in err and all(w in err for w in words)
              and not os.path.exists(os.path.join(d, "x.so")),
              "build-catalogue %s" % name, "(rc %d, stderr %r, expected %r + %s)" % (p.returncode, err, want, words))

    # accepted: a STATE's <tolerance>, a UNITS constant, REPRESENTS, at_time, TABLE
    ok = os.path.join(work, "accepted")
    os.makedirs(ok)
    with open(os.path.join(ok, "acc.mod"), "w") as f:
        f.write("NEURON {\n SUFFIX acc\n REPRESENTS NCIT:C17145\n USEION k READ ek WRITE ik REPRESENTS CHEBI:29103\n}\n"
                "UNITS { (mV) = (millivolt)\n B = .26 (mM-cm2/mA-ms)\n F = (faraday) (coulomb) }\n"
                "PARAMETER { g = 0.001 (S/cm2) <0, 1e9> }\nASSIGNED { v (mV) ek (mV) ik (mA/cm2) minf }\n"
                "STATE { n <1e-4> }\nBREAKPOINT { SOLVE s METHOD cnexp\n at_time(1)\n ik = B*g*n*(v - ek)/F*F }\n"
                "INITIAL { rates(v)\n n = minf }\nDERIVATIVE s { rates(v)\n n' = (minf - n)/5 }\n"
                "PROCEDURE rates(v (mV)) {\n TABLE minf FROM -100 TO 100 WITH 200\n minf = 1/(1 + exp(-v/10)) }\n")
    p = run([a.cablesim, "build-catalogue", ok, "-o", os.path.join(ok, "acc.so"), "--cuda", "off"])
    check(p.returncode == 0 and os.path.isfile(os.path.join(ok, "acc.so")), "accepted constructs compile", p.stderr.strip())

    # ... and the command's own errors
    empty = os.path.join(work, "empty")
    os.makedirs(empty)
    for args, rc, words in (([], 2, ["required"]), ([os.path.join(work, "nowhere"), "-o", "x.so"], 1, ["not a folder"]),
                            ([empty, "-o", "x.so"], 1, ["no .mod files"])):
        p = run([a.cablesim, "build-catalogue"] + args)
        err = p.stderr.strip()
        check(p.returncode == rc and err.startswith("cablesim: error: ") and "\n" not in err and
              all(w in err for w in words), "build-catalogue %s" % " ".join(args[:1]) or "(no arguments)",
              "(rc %d, %r)" % (p.returncode, err))

    # 2. catalogue errors in a model
    mods = os.path.join(work, "mods")
    os.makedirs(mods)
    shutil.copy(os.path.join(a.source_dir, "tests", "data", "mod", "Ih.mod"), mods)
    p = run([a.cablesim, "build-catalogue", mods, "-o", os.path.join(work, "good.so"), "--cuda", "off"])
    check(p.returncode == 0, "build-catalogue of Ih.mod", p.stderr.strip())
    fake = os.path.join(work, "abi1.c")
    with open(fake, "w") as f:
        f.write("int cs_mech_catalogue_abi(void) { return 1; }\nvoid *cs_mech_catalogue_get(void) { return 0; }\n")
    run(["cc", "-shared", "-fPIC", "-o", os.path.join(work, "abi1.so"), fake])
    with open(os.path.join(work, "text.so"), "w") as f:
        f.write("not a library\n")
    clash = os.path.join(work, "clash")
    os.makedirs(clash)
    with open(os.path.join(clash, "hh.mod"), "w") as f:
        f.write("NEURON { SUFFIX hh\n NONSPECIFIC_CURRENT i }\nASSIGNED { i }\nBREAKPOINT { i = 0 }\n")
    run([a.cablesim, "build-catalogue", clash, "-o", os.path.join(work, "clash.so"), "--cuda", "off"])
    model = ('{"catalogues": ["%s"], "run": {"tfinal": 1, "dt": 0.025}, "populations": [{"name": "p", "count": 1, '
             '"morphology": {"generator": "soma", "radius": 5}, "biophysics": {"mechanisms": [{"name": "%s"}]}}]}')
    for cat, mech, words in (("missing.so", "Ih", ["catalogue", "missing.so", "not found"]),
                             ("text.so", "Ih", ["catalogue", "text.so", "cannot be loaded"]),
                             ("abi1.so", "Ih", ["mechanism ABI 1", "rebuild"]),
                             ("clash.so", "hh", ["'hh' is already defined"]),
                             ("good.so", "Ihx", ["unknown mechanism 'Ihx'", "Ih"])):
        path = os.path.join(work, "model_%s.json" % cat.split(".")[0])
        with open(path, "w") as f:
            f.write(model % (cat, mech))
        p = run([a.cablesim, "run", path, "--no-output", "-q"])
        err = p.stderr.strip()
        check(p.returncode == 1 and err.startswith("cablesim: error: %s: " % path) and "\n" not in err
              and all(w in err for w in words), "model with catalogue %s" % cat, "(rc %d, %r)" % (p.returncode, err))
    path = os.path.join(work, "model_good.json")
    with open(path, "w") as f:
        f.write(model % ("good.so", "Ih"))
    p = run([a.cablesim, "run", path, "--no-output", "-q"])
    check(p.returncode == 0, "model with a good catalogue runs", p.stderr.strip())

    # ion concentrations at run time: one that goes negative ends the run naming the cell, the
    # concentration and the mechanism that writes it; a probe of cai where no mechanism uses
    # calcium is refused naming the population, cell and location
    drain = os.path.join(work, "drain")
    os.makedirs(drain)
    with open(os.path.join(drain, "cadrain.mod"), "w") as f:
        f.write("NEURON { SUFFIX cadrain\n USEION ca READ ica WRITE cai\n RANGE rate }\n"
                "PARAMETER { rate = 0.001 (mM/ms) }\nSTATE { cai (mM) }\nBREAKPOINT { SOLVE s METHOD cnexp }\n"
                "DERIVATIVE s { cai' = -rate }\n")
    p = run([a.cablesim, "build-catalogue", drain, "-o", os.path.join(work, "drain.so"), "--cuda", "off"])
    check(p.returncode == 0, "build-catalogue of cadrain.mod", p.stderr.strip())
    conc = ('{"catalogues": ["drain.so"], "run": {"tfinal": 1, "dt": 0.025}, "populations": [{"name": "p", "count": 1, '
            '"morphology": {"generator": "soma", "radius": 5}, "biophysics": {"mechanisms": [{"name": "%s"}]}, '
            '"probes": {"locations": [{"branch": 0, "pos": 0.5}], "interval": 0.1, "variables": ["v", "cai"]}}]}')
    for mech, words in (("cadrain", ["cell 0", "cai became", "negative or NaN", "'cadrain'"]),
                        ("pas", ["population 'p' cell 0", "'cai'", "no mechanism on that CV uses that ion"])):
        path = os.path.join(work, "model_conc_%s.json" % mech)
        with open(path, "w") as f:
            f.write(conc % mech)
        p = run([a.cablesim, "run", path, "--no-output", "-q"])
        err = p.stderr.strip()
        check(p.returncode == 1 and "\n" not in err and all(w in err for w in words),
              "concentration error (%s)" % mech, "(rc %d, %r)" % (p.returncode, err))

    # 3. a seeded fuzz of the reader, in process
    sys.path.insert(0, os.path.join(a.source_dir, "nmodl"))
    from nmodl_codegen import Gen
    from nmodl_lexer import NmodlError
    from nmodl_parser import parse_file
    rng = random.Random(20)
    sources = sorted(glob.glob(os.path.join(a.source_dir, "tests", "data", "mod", "*.mod")))
    texts = [open(f).read() for f in sources]
    fpath = os.path.join(work, "fuzz.mod")
    n_ok = n_err = n_bad = 0
    for k in range(400):
        text = texts[k % len(texts)]
        lines = text.split("\n")
        op = rng.randrange(5)
        if op == 0:
            del lines[rng.randrange(len(lines))]
        elif op == 1:
            i = rng.randrange(len(lines))
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 2:
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            s = "\n".join(lines)
            i = rng.randrange(len(s))
            ins = "".join(rng.choice("{}()=+-*/^'<>,:;!&|~@x0.e1 \n\t") for _ in range(rng.randrange(1, 4)))
            lines = (s[:i] + (ins if op == 3 else "") + s[i + (rng.randrange(1, 4) if op == 4 else 0):]).split("\n")
        with open(fpath, "w") as f:
            f.write("\n".join(lines))
        try:
            g = Gen(parse_file(fpath))
            g.body_header()
            g.c_file(True)
            g.cu_file()
            n_ok += 1
        except NmodlError as e:
            msg = str(e)
            if msg.startswith(fpath + ":") and "\n" not in msg:
                n_err += 1
            else:
                n_bad += 1
                print("bad message: %r" % msg)
        except Exception as e:  # noqa: BLE001
            n_bad += 1
            print("mutation %d: %s: %s" % (k, type(e).__name__, e))
    check(n_bad == 0 and n_err > 50, "fuzz of the reader", "(%d compiled, %d one-line errors, %d other failures)"
          % (n_ok, n_err, n_bad))
    print("%d failed" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

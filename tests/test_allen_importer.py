#!/usr/bin/python3
"""The Allen Cell Types importer's errors and entry points (issue 27; models/cs_allen.c).

Malformed fit files (and model files that misuse "allen") each end `cablesim run` with exit 1
and one line naming the fit file (or the model file) and what is wrong; a fit file whose genome
names only built-in mechanisms (hh, pas) runs, and `cablesim allen` writes a model that runs.
No NEURON, no catalogue needed. Exit 0 all passed, 1 a check failed."""

import argparse
import json
import os
import shutil
import subprocess
import sys

GOOD = {"passive": [{"ra": 100, "e_pas": -70, "cm": [{"section": "soma", "cm": 1.0}, {"section": "dend", "cm": 2.0}]}],
        "conditions": [{"celsius": 6.3, "erev": [{"section": "soma", "ena": 50, "ek": -77}], "v_init": -65}],
        "genome": [{"section": "soma", "name": "g_pas", "mechanism": "", "value": 1e-4},
                   {"section": "dend", "name": "g_pas", "mechanism": "", "value": 1e-4},
                   {"section": "soma", "name": "gnabar_hh", "mechanism": "hh", "value": 0.12}]}


def variant(**kw):
    d = json.loads(json.dumps(GOOD))
    for k, v in kw.items():
        if v is None:
            del d[k]
        else:
            d[k] = v
    return d


def gene(**kw):
    g = {"section": "soma", "name": "gnabar_hh", "mechanism": "hh", "value": 0.12}
    g.update(kw)
    return variant(genome=[g])


# (name, fit file content (text or dict), processing, words of the message)
CASES = [
    ("not_json", "{ \"passive\": [", "aibs_perisomatic", ["not JSON"]),
    ("no_passive", variant(passive=None), "aibs_perisomatic", ["missing 'passive'"]),
    ("passive_type", variant(passive=3), "aibs_perisomatic", ["'passive' must be a list of one object"]),
    ("no_genome", variant(genome=None), "aibs_perisomatic", ["'genome' must be a list"]),
    ("section", gene(section="basal"), "aibs_perisomatic", ["genome[0]", "unknown section 'basal'"]),
    ("mechanism", gene(mechanism="NaTs", name="gbar_NaTs"), "aibs_perisomatic",
     ["genome[0]", "'NaTs' is neither built in nor in the model's catalogues"]),
    ("name", gene(name="gnabar"), "aibs_perisomatic", ["genome[0]", "'gnabar' is not PARAMETER_hh"]),
    ("parameter", gene(name="foo_hh"), "aibs_perisomatic", ["genome[0]", "'hh' has no parameter 'foo'"]),
    ("value", gene(value="abc"), "aibs_perisomatic", ["genome[0]", "'value' must be a finite number"]),
    ("range", gene(value=-1.0), "aibs_perisomatic", ["genome[0]", "gnabar of 'hh' = -1 is outside"]),
    ("section_property", gene(mechanism="", name="diam"), "aibs_perisomatic",
     ["genome[0]", "'diam' without a mechanism"]),
    ("erev", variant(conditions=[{"erev": [{"section": "soma", "ecl": -80}]}]), "aibs_perisomatic",
     ["conditions.erev[0]", "unknown key 'ecl'"]),
    ("cm", variant(passive=[{"ra": 100, "cm": [{"section": "soma", "cm": -1}]}]), "aibs_perisomatic",
     ["passive.cm", "must be > 0"]),
    ("processing", GOOD, "aibs_other", ["model processing 'aibs_other'"]),
]


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cablesim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()
    work = os.path.abspath(a.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    swc = os.path.join(os.path.abspath(a.source_dir), "tests", "data", "allen", "Scnn1a_473845048_m.swc")
    fails = 0

    def check(ok, what, detail=""):
        nonlocal fails
        print("%s %s %s" % ("PASS" if ok else "FAIL", what, detail))
        fails += not ok

    def model(fit, proc, extra=None):
        pop = {"name": "cell", "count": 1, "allen": {"fit": fit, "morphology": swc, "processing": proc},
               "stimuli": [{"mechanism": "iclamp", "location": {"branch": 0, "pos": 0.5}, "cells": "all",
                            "params": {"delay": 5, "duration": 40, "amplitude": 0.5}}],
               "detector": {"location": {"branch": 0, "pos": 0.5}, "threshold": -10.0}}
        pop.update(extra or {})
        return {"run": {"tfinal": 50, "dt": 0.025}, "populations": [pop]}

    for name, content, proc, words in CASES:
        fit = os.path.join(work, name + "_fit.json")
        with open(fit, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        path = os.path.join(work, name + ".json")
        with open(path, "w") as f:
            json.dump(model(fit, proc), f)
        p = run([a.cablesim, "run", path, "--no-output", "-q"])
        err = p.stderr.strip()
        check(p.returncode == 1 and err.startswith("cablesim: error: %s: " % fit) and "\n" not in err
              and all(w in err for w in words), "fit %s" % name, "(rc %d, %r)" % (p.returncode, err))

    good = os.path.join(work, "good_fit.json")
    with open(good, "w") as f:
        json.dump(GOOD, f)
    for name, extra, words in (("with_morphology", {"morphology": {"generator": "soma", "radius": 5}},
                                ["give neither 'morphology' nor 'biophysics'"]),
                               ("missing_fit", {"allen": {"fit": "nowhere_fit.json", "morphology": swc}},
                                ["nowhere_fit.json", "cannot open the Allen fit file"])):
        path = os.path.join(work, name + ".json")
        with open(path, "w") as f:
            json.dump(model(good, "aibs_perisomatic", extra), f)
        p = run([a.cablesim, "run", path, "--no-output", "-q"])
        err = p.stderr.strip()
        check(p.returncode == 1 and "\n" not in err and all(w in err for w in words), "model %s" % name,
              "(rc %d, %r)" % (p.returncode, err))
    # celsius from the fit file; a run.celsius that says otherwise is refused
    m = model(good, "aibs_perisomatic")
    m["run"]["celsius"] = 34.0
    path = os.path.join(work, "celsius.json")
    with open(path, "w") as f:
        json.dump(m, f)
    p = run([a.cablesim, "run", path, "--no-output", "-q"])
    check(p.returncode == 1 and "differs from the run's" in p.stderr, "run.celsius against the fit's",
          p.stderr.strip())

    # a good fit file (built-in mechanisms only) runs, both processings, and fires
    for proc in ("aibs_perisomatic", "aibs_allactive"):
        path = os.path.join(work, "good_%s.json" % proc)
        with open(path, "w") as f:
            json.dump(model(good, proc), f)
        p = run([a.cablesim, "run", path, "--no-output"])
        spikes = [ln.split()[4] for ln in p.stdout.splitlines() if ln.strip().startswith("population cell")]
        check(p.returncode == 0 and spikes and int(spikes[0]) > 0, "good fit file runs (%s)" % proc,
              "(rc %d, spikes %s, %s)" % (p.returncode, spikes, p.stderr.strip()))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Validate every models/**/*.json against docs/model.schema.json (JSON Schema draft 2020-12).

Also checks that the schema itself is valid and that it rejects a few broken models (so a schema
that accepts everything cannot pass). Needs python3-jsonschema; prints SKIP and exits 77 without it.

Usage: test_model_schema.py --cablesim PATH --source-dir DIR --work-dir DIR
"""

import argparse
import copy
import glob
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cablesim")
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir")
    args = ap.parse_args()
    try:
        import jsonschema
        from jsonschema import Draft202012Validator
    except ImportError as e:
        print("SKIP: python3-jsonschema not importable (%s)" % e)
        return 77

    npass = nfail = 0

    def check(ok, what):
        nonlocal npass, nfail
        print("%s %s" % ("PASS" if ok else "FAIL", what))
        if ok:
            npass += 1
        else:
            nfail += 1

    with open(os.path.join(args.source_dir, "docs", "model.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    try:
        Draft202012Validator.check_schema(schema)
        check(True, "schema is a valid draft 2020-12 schema")
    except jsonschema.exceptions.SchemaError as e:
        check(False, "schema is a valid draft 2020-12 schema: %s" % e.message)
        print("%d passed, %d failed" % (npass, nfail))
        return 1
    v = Draft202012Validator(schema)

    files = sorted(glob.glob(os.path.join(args.source_dir, "models", "**", "*.json"), recursive=True))
    # models with catalogue mechanisms (tests/test_nmodl_neuron.py)
    files += sorted(glob.glob(os.path.join(args.source_dir, "tests", "data", "nmodl_models", "*.json")))
    check(len(files) > 0, "found %d model files under models/" % len(files))
    models = {}
    for p in files:
        rel = os.path.relpath(p, args.source_dir)
        try:
            with open(p, encoding="utf-8") as f:
                m = json.load(f)
        except ValueError as e:
            check(False, "%s: not JSON: %s" % (rel, e))
            continue
        models[rel] = m
        errs = sorted(v.iter_errors(m), key=lambda e: list(e.absolute_path))
        detail = "; ".join("%s: %s" % ("/".join(str(x) for x in e.absolute_path) or "(root)", e.message[:200])
                           for e in errs[:3])
        check(not errs, "%s valid%s" % (rel, "" if not errs else " -- " + detail))

    # The schema must reject broken models: take a valid one with every part and break it.
    base = None
    for rel in ("models/validation/ring4.json", "models/default.json"):
        if rel in models:
            base = models[rel]
            break
    if base is None and models:
        base = next(iter(models.values()))
    if base is not None and v.is_valid(base):
        def broken(what, mutate):
            m = copy.deepcopy(base)
            mutate(m)
            check(not v.is_valid(m), "rejects %s" % what)

        broken("an unknown top-level key", lambda m: m.__setitem__("runn", {}))
        broken("an unknown key in run", lambda m: m["run"].__setitem__("t_final", 1.0))
        broken("dt <= 0", lambda m: m["run"].__setitem__("dt", 0.0))
        broken("a missing tfinal", lambda m: m["run"].pop("tfinal"))
        broken("both max_cv_length and cvs_per_branch", lambda m: m.__setitem__(
            "discretization", {"max_cv_length": 20.0, "cvs_per_branch": 3}))
        broken("no populations", lambda m: m.__setitem__("populations", []))
        broken("an unknown generator", lambda m: m["populations"][0].__setitem__(
            "morphology", {"generator": "pyramid", "radius": 3.0}))
        broken("a negative radius", lambda m: m["populations"][0].__setitem__(
            "morphology", {"generator": "soma", "radius": -1.0}))
        broken("a branch with an unknown tag", lambda m: m["populations"][0].__setitem__(
            "morphology", {"branches": [{"parent": -1, "length": 10.0, "radius": 1.0, "tag": "spine"}]}))
        broken("pos > 1", lambda m: m["populations"][0]["detector"]["location"].__setitem__("pos", 1.5))
        broken("an unknown mechanism", lambda m: m["populations"][0]["biophysics"]["mechanisms"].append(
            {"name": "kdr", "region": "soma"}))
        broken("an unknown region", lambda m: m["populations"][0]["biophysics"]["mechanisms"][0].__setitem__(
            "region", "dendrite"))
        broken("a pas parameter of hh", lambda m: m["populations"][0]["biophysics"]["mechanisms"][0].__setitem__(
            "params", {"g": 0.001}))
        broken("an unknown connection type", lambda m: m.__setitem__(
            "connections", [{"type": "all_to_all", "population": "ring", "synapse": "syn", "weight": 0.1,
                             "delay": 1.0}]))
        broken("an event without weight", lambda m: m.__setitem__(
            "events", [{"target": {"population": "ring", "cell": 0, "synapse": "syn"}, "time": 1.0}]))
        broken("a string count", lambda m: m["populations"][0].__setitem__("count", "4"))
        broken("probes without locations", lambda m: m["populations"][0]["probes"].pop("locations"))

        # and accept the other documented forms
        def accepted(what, mutate):
            m = copy.deepcopy(base)
            mutate(m)
            errs = list(v.iter_errors(m))
            check(not errs, "accepts %s%s" % (what, "" if not errs else " -- " + errs[0].message[:200]))

        accepted("an SWC morphology", lambda m: m["populations"][0].__setitem__(
            "morphology", {"swc": "cell.swc", "scale": 0.001, "min_radius": 0.1}))
        accepted("a cable", lambda m: m["populations"][0].__setitem__(
            "morphology", {"generator": "cable", "length": 1000.0, "radius": 0.5, "cvs": 0}))
        accepted("a random tree", lambda m: m["populations"][0].__setitem__(
            "morphology", {"generator": "random_tree", "soma_radius": 6.3, "dend_radius": 0.5, "depth": 5,
                           "branch_probability": [1.0, 0.5], "length": [200, 20], "cvs": [20, 2]}))
        accepted("cvs_per_branch", lambda m: m.__setitem__("discretization", {"cvs_per_branch": 3}))
        accepted("random and explicit connections", lambda m: m.__setitem__("connections", [
            {"type": "explicit", "source": {"population": "ring", "cell": 0},
             "target": {"population": "ring", "cell": 2, "synapse": "syn"}, "weight": 0.01, "delay": 2.0},
            {"type": "random", "source": "ring", "target": "ring", "synapse": "syn", "indegree": 2,
             "weight": 0.01, "delay": 3.0}]))
        accepted("run options", lambda m: m["run"].update({"backend": "auto", "threads": 0, "celsius": 6.3,
                                                           "seed": 7}))
        accepted("probes.variables", lambda m: m["populations"][0]["probes"].__setitem__(
            "variables", ["v", "hh.m", "ina", "syn.g", "na.h", "i_membrane"]))
        broken("an empty probes.variables", lambda m: m["populations"][0]["probes"].__setitem__("variables", []))
        broken("a probe variable with '/'", lambda m: m["populations"][0]["probes"].__setitem__(
            "variables", ["hh/m"]))
    else:
        check(False, "a valid model to break (ring4.json or default.json)")

    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())

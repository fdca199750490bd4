#!/usr/bin/python3
"""bmtk's mechanism folder against NEURON (issue 27): tests/test_nmodl_neuron.py on
tests/data/mod_bmtk (its PROVENANCE.md): every file compiles (vecevent.mod's ARTIFICIAL_CELL
gives its one-line error until artificial cells land), and the models
tests/data/nmodl_models/bmtk_*.json agree with NEURON (spikes, v, and the cai and eca traces).
Exit: 0 all passed, 1 a check failed, 77 skipped (no NEURON / h5py / nrnivmodl)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_nmodl_neuron  # noqa: E402

if __name__ == "__main__":
    sys.exit(test_nmodl_neuron.main(sys.argv[1:] + ["--mod-subdir", "mod_bmtk"]))

"""``python -m cablesim ...`` and the ``cablesim`` console script: the command-line program
installed with the package (``cablesim --help``)."""
from __future__ import annotations

import os
import sys


def main() -> None:
    from . import cli_path
    exe = cli_path()
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    main()

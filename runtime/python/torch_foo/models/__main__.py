"""python -m <package>.models: see the package docstring and `--help`."""

import sys

from .driver import main

sys.exit(main())

"""python -m <package>.conformance: see the package docstring and `--help`."""

import sys

from .driver import main

sys.exit(main())

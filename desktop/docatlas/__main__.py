"""`python -m docatlas`: the `docatlas` command (no arguments: the window)."""

import sys

from docatlas.cli import main

sys.exit(main())

"""`python -m docatlas.cli`: the `docatlas` command."""

import sys

from docatlas.cli import main

sys.exit(main())

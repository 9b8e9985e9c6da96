"""`python -m docatlas`: the `docatlas` command (no arguments: the window)."""

from docatlas.cli import run

run()

"""`python -m docatlas.cli`: the `docatlas` command."""

from docatlas.cli import run

run()

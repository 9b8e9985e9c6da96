"""The version is set in one place, docatlas/__init__.py; everything else reads it from there."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata

import docatlas
import pytest
from packaging_helpers import PACKAGING, REPO


def test_pyproject_takes_the_version_from_the_package():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "docatlas.__version__"}


def test_the_build_reads_the_same_version(bundle):
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:[.-]?\w+)?", docatlas.__version__)
    assert bundle.version() == docatlas.__version__
    numbers = bundle.version_tuple()
    assert len(numbers) == 4 and ".".join(map(str, numbers[:3])) == re.match(r"[\d.]+", docatlas.__version__)[0]


def test_installed_metadata_agrees():
    try:
        installed = metadata.version("docatlas")
    except metadata.PackageNotFoundError:
        pytest.skip("docatlas is not installed in this Python (pip install -e .), so it has no metadata")
    assert installed == docatlas.__version__, "reinstall (pip install -e .) after changing __version__"


def test_no_other_file_hard_codes_it():
    """Packaging files get the version from bundle.py or the build scripts, never a literal."""
    version = re.escape(docatlas.__version__)
    for path in [*PACKAGING.rglob("*"), *(REPO / ".github").rglob("*")]:
        if path.is_file() and path.suffix in {".py", ".sh", ".ps1", ".iss", ".spec", ".yml", ".yaml", ".plist",
                                              ".desktop", ".txt", ".md"} and "licenses" not in path.parts:
            text = path.read_text(encoding="utf-8")
            assert not re.search(rf"(?<![\d.]){version}(?![\d])", text), f"{path} hard-codes {docatlas.__version__}"


def test_the_frozen_entry_point_prints_it():
    """packaging/entry.py is what the bundle runs; `--version` must answer without a window."""
    result = subprocess.run([sys.executable, str(PACKAGING / "entry.py"), "--version"], capture_output=True,
                            text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"DocAtlas {docatlas.__version__}"

"""Packaging test set-up: offscreen Qt, and packaging/bundle.py loaded by path.

These tests never build the bundle (that takes minutes: packaging/linux/smoke_test.py does
it); they check the inputs of the build. There is no __init__.py here, on purpose: a
package named `packaging` would shadow the library of that name.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from packaging_helpers import PACKAGING, load


@pytest.fixture(scope="session")
def bundle():
    """packaging/bundle.py: what the PyInstaller spec puts in the bundle."""
    return load(PACKAGING / "bundle.py", "docatlas_packaging_bundle")

"""Paths and loaders shared by the packaging tests."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGING = REPO / "packaging"
RESOURCES = REPO / "resources"
ICONS = RESOURCES / "icons"


def load(path: Path, name: str):
    """Import a file that is not on sys.path, as module `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def png_header(path: Path) -> tuple[int, int, int]:
    """Width, height and colour type of a PNG file."""
    data = path.read_bytes()[:26]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height, data[25]

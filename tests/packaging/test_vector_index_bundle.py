"""The bundle takes the vector index's compiled modules (usearch and the numkong kernels it loads
with ctypes), which the index imports only inside functions."""

from __future__ import annotations

import importlib.util


def test_the_vector_index_modules_are_named_and_importable(bundle):
    hidden = bundle.hidden_imports()
    for module in ("usearch.index", "usearch.compiled", "numkong._numkong"):
        assert module in hidden
        assert importlib.util.find_spec(module) is not None, f"{module} is not installed"
    source = (bundle.PACKAGE / "core" / "retrieval" / "vector_index.py").read_text(encoding="utf-8")
    assert "from usearch.index import Index" in source  # what the hidden imports stand for

"""Shared test set-up: the package on sys.path, private dirs per test, the fake Ollama fixture."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS.parent / "desktop"))

from fixtures.ollama_fixture import fake_ollama  # noqa: E402, F401  (a fixture, used by name)

CORPUS = TESTS.parent.parent / "shared" / "corpus"


@pytest.fixture(autouse=True)
def private_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own workspace, config, log and cache dirs, and no inherited OLLAMA_HOST."""
    root = tmp_path_factory.mktemp("docatlas")
    monkeypatch.setenv("DOCATLAS_DATA_DIR", str(root / "data"))
    monkeypatch.setenv("DOCATLAS_CONFIG_DIR", str(root / "config"))
    monkeypatch.setenv("DOCATLAS_LOG_DIR", str(root / "logs"))
    monkeypatch.setenv("DOCATLAS_CACHE_DIR", str(root / "cache"))
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    from docatlas.core.llm import steady_context

    steady_context.forget()  # the contexts asked of models by earlier tests (a port can be reused)
    return root

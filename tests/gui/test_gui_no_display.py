"""Started without a display, `docatlas` says so in one sentence, with Qt's own message, and exits 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from docatlas.gui.app import NO_DISPLAY

DESKTOP = Path(__file__).resolve().parents[2] / "desktop"


def test_no_display_prints_one_sentence_and_qts_message_and_exits_non_zero(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(QT_QPA_PLATFORM="xcb", DOCATLAS_DATA_DIR=str(tmp_path / "data"),
               DOCATLAS_CONFIG_DIR=str(tmp_path / "config"), DOCATLAS_LOG_DIR=str(tmp_path / "logs"),
               PYTHONPATH=os.pathsep.join([str(DESKTOP), env.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "docatlas"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert NO_DISPLAY in done.stderr and done.stderr.count(NO_DISPLAY) == 1
    assert "Qt platform plugin" in done.stderr  # Qt's own words too
    assert "docatlas ingest, query" in NO_DISPLAY

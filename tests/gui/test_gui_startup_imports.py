"""The window's start-up imports what a run imports, before the window is built, so a run's first
seconds import nothing on its threads while the window is open (bench/gui_responsiveness.py)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from docatlas.gui.app import RUN_MODULES

DESKTOP = Path(__file__).resolve().parents[2] / "desktop"
INGEST_JOB = DESKTOP / "docatlas" / "core" / "jobs" / "ingest.py"

# Runs the real app.main in a fresh interpreter (nothing imported by other tests), notes which of
# RUN_MODULES are imported at the moment the window is built, and lets the window close itself.
START_UP = """
import json, os, sys
from docatlas.gui import app
seen = {}
build = app._open_window
def noting(folder, state):
    seen["missing"] = [name for name in app.RUN_MODULES if name not in sys.modules]
    return build(folder, state)
app._open_window = noting
code = app.main()
print(json.dumps({"code": code, **seen}), flush=True)
os._exit(code)  # the interpreter's teardown of the patched module's Qt objects is not what is tested
"""


def test_main_imports_the_run_modules_before_it_builds_the_window(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "DOCATLAS_DATA_DIR": str(tmp_path / "data"),
           "DOCATLAS_CONFIG_DIR": str(tmp_path / "config"), "DOCATLAS_LOG_DIR": str(tmp_path / "logs"),
           "DOCATLAS_QUIT_AFTER_MS": "0",
           "PYTHONPATH": os.pathsep.join([str(DESKTOP), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", START_UP], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"code": 0, "missing": []}


def test_every_module_the_ingest_job_imports_late_is_a_run_module():
    late = set()
    for node in ast.walk(ast.parse(INGEST_JOB.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef):
            late |= {inner.module for inner in ast.walk(node)
                     if isinstance(inner, ast.ImportFrom) and inner.module and inner.module.startswith("docatlas")}
    assert late, "the ingest job imports its stages inside the job"
    assert late <= set(RUN_MODULES), f"import these at start-up too (gui/app.RUN_MODULES): {late - set(RUN_MODULES)}"

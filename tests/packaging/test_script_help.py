"""Every script under packaging/ answers --help with what it does, and builds nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"
SCRIPTS = sorted(p for p in PACKAGING.rglob("*") if p.suffix in (".sh", ".py", ".ps1"))


def test_the_list_of_scripts_is_complete():
    names = {p.relative_to(PACKAGING).as_posix() for p in SCRIPTS}
    assert {"linux/build.sh", "macos/build.sh", "windows/build.ps1", "bundle.py", "entry.py",
            "icons/make_icons.py", "linux/smoke_test.py"} <= names


@pytest.mark.parametrize("script", [p for p in SCRIPTS if p.suffix != ".ps1"], ids=lambda p: p.name)
def test_help_says_what_it_does_and_builds_nothing(script, tmp_path):
    build_dir = tmp_path / "build"
    env = {**os.environ, "DOCATLAS_BUILD_DIR": str(build_dir), "DOCATLAS_NO_APT": "1",
           "PYTHON": sys.executable, "QT_QPA_PLATFORM": "offscreen"}
    command = ["bash", str(script)] if script.suffix == ".sh" else [sys.executable, str(script)]
    icons_before = sorted((PACKAGING.parent / "resources" / "icons").iterdir())
    result = subprocess.run([*command, "--help"], capture_output=True, text=True, env=env, timeout=60,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip().splitlines()) >= 1 and "Traceback" not in result.stderr
    assert not build_dir.exists() and sorted((PACKAGING.parent / "resources" / "icons").iterdir()) == icons_before
    assert not re.search(r"^==> ", result.stderr, re.MULTILINE)  # no build step started


def test_the_windows_script_answers_help_before_building():
    text = (PACKAGING / "windows" / "build.ps1").read_text(encoding="utf-8")
    help_at = text.index('"--help"')
    assert help_at < text.index("Say ") and "exit 0" in text[help_at:text.index("Say ")]

"""Run a piece of Python as a user without privileges, so file permissions really apply.

The tests run as root in some sandboxes, and root reads every file whatever its mode; the
child then runs without the capabilities that override file permissions (`setpriv`), so a
mode of 000 refuses it as it would refuse any user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DESKTOP = Path(__file__).resolve().parents[2] / "desktop"


def run_unprivileged(code: str, *args: str) -> object:
    """Run `code` (whose last line of output is one JSON value) without privileges; return the value."""
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.getuid() == 0 else []
    if prefix and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: file permissions cannot be made to apply")
    env = dict(os.environ, PYTHONPATH=str(DESKTOP))
    done = subprocess.run([*prefix, sys.executable, "-c", code, *args], capture_output=True, env=env,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    return json.loads(done.stdout.decode().strip().splitlines()[-1])

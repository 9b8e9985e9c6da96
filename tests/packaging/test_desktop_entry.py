"""The Linux .desktop entry: valid by the freedesktop.org spec, and matching what the .deb installs."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from packaging_helpers import PACKAGING

DESKTOP = PACKAGING / "linux" / "docatlas.desktop"
BUILD_SH = PACKAGING / "linux" / "build.sh"
MAIN_CATEGORIES = {"AudioVideo", "Audio", "Video", "Development", "Education", "Game", "Graphics", "Network",
                   "Office", "Science", "Settings", "System", "Utility"}
BOOLEAN_KEYS = {"Terminal", "StartupNotify", "NoDisplay", "Hidden", "DBusActivatable", "PrefersNonDefaultGPU"}


def entries() -> dict[str, str]:
    """The [Desktop Entry] group's keys; fails on anything the spec does not allow."""
    lines = [line for line in DESKTOP.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    assert lines[0] == "[Desktop Entry]", "the first group must be [Desktop Entry]"
    found: dict[str, str] = {}
    for line in lines[1:]:
        assert not line.startswith("["), f"only one group is expected, found {line}"
        match = re.fullmatch(r"([A-Za-z0-9-]+(?:\[[^\]]+\])?)=(.*)", line)
        assert match, f"not a key=value line: {line!r}"
        key, value = match.groups()
        assert key not in found, f"{key} is given twice"
        assert value == value.strip(), f"{key} has spaces around its value"
        found[key] = value
    return found


def test_required_keys_and_values():
    keys = entries()
    assert keys["Type"] == "Application"
    assert keys["Name"] == "DocAtlas"
    assert keys["Version"] in {"1.0", "1.1", "1.2", "1.3", "1.4", "1.5"}
    assert keys["Exec"].split()[0] == keys["TryExec"] == "docatlas"
    assert not re.search(r"%[fFuU]", keys["Exec"]), "docatlas takes no file arguments in the window"
    for key in BOOLEAN_KEYS & keys.keys():
        assert keys[key] in ("true", "false"), f"{key} must be true or false"
    assert keys["Terminal"] == "false"
    assert keys["StartupWMClass"] == "DocAtlas"  # the window's WM_CLASS class (app name in gui/app.py)
    for key in ("Categories", "Keywords"):
        assert keys[key].endswith(";"), f"{key} is a list and must end with ';'"
    categories = keys["Categories"].rstrip(";").split(";")
    assert len(MAIN_CATEGORIES & set(categories)) == 1, "exactly one main category"


def test_matches_what_the_deb_installs():
    """The icon name and the command are the ones build.sh installs."""
    keys = entries()
    script = BUILD_SH.read_text(encoding="utf-8")
    assert f'/apps/{keys["Icon"]}.png"' in script and f'/apps/{keys["Icon"]}.svg"' in script
    assert f'"$STAGE/usr/bin/{keys["Exec"]}"' in script
    assert '"$HERE/docatlas.desktop" "$STAGE/usr/share/applications/docatlas.desktop"' in script


@pytest.mark.skipif(not shutil.which("desktop-file-validate"),
                    reason="desktop-file-validate is not installed (Debian: desktop-file-utils); the keys are "
                           "checked by test_required_keys_and_values")
def test_desktop_file_validate():
    result = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True)
    assert result.returncode == 0 and "error" not in result.stdout, result.stdout + result.stderr

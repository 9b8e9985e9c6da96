"""The top-level resources/ folder (prompts, icons) is found at run time in each way DocAtlas runs:
this checkout (the test venv), an editable install, an installed wheel, and the PyInstaller bundle's
layout (packaging/bundle.py's data list). The wheel and the editable install are built once per
session from a copy of the repository, with pip, and run in a fresh interpreter that sees only them."""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from docatlas.core.base.resources import resource_dir
from docatlas.core.prompts.catalog import available_profiles, load_profile, prompts_root
from packaging_helpers import REPO, RESOURCES

# What a fresh interpreter prints about where it found docatlas and its resources.
PROBE = """
import json
import docatlas
from docatlas.core.base.resources import resource_dir
from docatlas.core.prompts.catalog import available_profiles, load_profile, prompts_root
profiles = available_profiles()
print(json.dumps({"package": docatlas.__file__, "prompts": str(prompts_root()), "profiles": profiles,
                  "loaded": [load_profile(name).name for name in profiles],
                  "icons": sorted(p.name for p in resource_dir("icons").iterdir())}))
"""


def bundled_files() -> list[str]:
    """Every file of resources/ but its __init__.py, relative to it ("prompts/json/extract.txt")."""
    return sorted(p.relative_to(RESOURCES).as_posix() for p in RESOURCES.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".py", ".pyc"))


def profile_folders() -> list[str]:
    """The prompt profiles in resources/prompts (folders with a profile.json)."""
    return sorted(p.parent.name for p in (RESOURCES / "prompts").glob("*/profile.json"))


def copy_of_repository(destination: Path) -> Path:
    """What pip needs to build DocAtlas, copied, so builds leave this checkout untouched."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, destination / name)
    for name in ("desktop", "resources"):
        shutil.copytree(REPO / name, destination / name, ignore=skip)
    return destination


def pip(*args: str) -> None:
    """Run this interpreter's pip (the configured index gives setuptools to isolated builds)."""
    result = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                            capture_output=True, text=True)
    assert result.returncode == 0, f"pip {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"


def probe(code: str) -> dict:
    """Run PROBE in a fresh interpreter whose path `code` sets up (no PYTHONPATH, no site .pth files);
    this venv's site-packages come last, for tiktoken and the other dependencies only."""
    setup = f"import site, sys\n{code}\nsys.path += {site.getsitepackages()!r}\n"
    result = subprocess.run([sys.executable, "-I", "-S", "-c", setup + PROBE], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> dict[str, Path]:
    """A wheel built from a copy of the repository, and that copy."""
    source = copy_of_repository(tmp_path_factory.mktemp("source"))
    wheels = tmp_path_factory.mktemp("wheels")
    pip("wheel", "--no-deps", "--quiet", "-w", str(wheels), str(source))
    (wheel,) = wheels.glob("docatlas-*.whl")
    return {"wheel": wheel, "source": source}


def test_the_checkout_finds_every_profile_and_icon(bundle):
    """The test venv runs DocAtlas from this checkout: resources/ beside desktop/."""
    assert prompts_root() == resource_dir("prompts") == RESOURCES / "prompts"
    assert available_profiles() == profile_folders() and len(profile_folders()) >= 4
    for name in available_profiles():
        assert load_profile(name).prompts["extract"]
    icons = resource_dir("icons")
    assert icons == RESOURCES / "icons"
    for size in bundle.ICON_SIZES:
        assert (icons / f"docatlas-{size}.png").is_file()


def test_a_missing_folder_says_what_to_do():
    from docatlas.core.base.errors import DocAtlasError

    with pytest.raises(DocAtlasError, match=r"resources/fonts\).*reinstall DocAtlas"):
        resource_dir("fonts")


def test_the_wheel_holds_every_resource_and_every_module(built):
    names = set(zipfile.ZipFile(built["wheel"]).namelist())
    for relative in bundled_files():
        assert f"docatlas/resources/{relative}" in names, f"the wheel has no docatlas/resources/{relative}"
    assert "docatlas/resources/__init__.py" in names
    modules = [p.relative_to(REPO / "desktop").as_posix() for p in (REPO / "desktop" / "docatlas").rglob("*.py")]
    missing = [m for m in modules if m not in names]
    assert not missing, f"setup.py does not ship {missing}"


def test_an_installed_wheel_loads_its_own_profiles(built, tmp_path):
    target = tmp_path / "site"
    pip("install", "--no-deps", "--no-index", "--quiet", "--target", str(target), str(built["wheel"]))
    found = probe(f"sys.path.insert(0, {str(target)!r})")
    assert Path(found["package"]).is_relative_to(target)
    assert Path(found["prompts"]) == target / "docatlas" / "resources" / "prompts"
    assert found["profiles"] == found["loaded"] == profile_folders()
    assert found["icons"] == sorted(p.name for p in (RESOURCES / "icons").iterdir())


def test_an_editable_install_loads_the_profiles_of_its_checkout(built, tmp_path):
    """pip install -e maps docatlas to desktop/docatlas; the resources are resources/ beside it."""
    target = tmp_path / "site"
    pip("install", "--no-deps", "--quiet", "--target", str(target), "-e", str(built["source"]))
    found = probe(f"site.addsitedir({str(target)!r})")  # runs the install's .pth file
    source = built["source"]
    assert Path(found["package"]) == source / "desktop" / "docatlas" / "__init__.py"
    assert Path(found["prompts"]) == source / "resources" / "prompts"
    assert found["profiles"] == found["loaded"] == profile_folders()
    assert found["icons"] == sorted(p.name for p in (RESOURCES / "icons").iterdir())


def test_the_bundle_layout_loads_the_profiles(bundle, tmp_path):
    """The PyInstaller bundle: docatlas's code beside the data files where bundle.data_files() puts them."""
    internal = tmp_path / "_internal"
    shutil.copytree(REPO / "desktop" / "docatlas", internal / "docatlas", ignore=shutil.ignore_patterns("__pycache__"))
    for source, folder in bundle.data_files():
        (internal / folder).mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, internal / folder)
    found = probe(f"sys.path.insert(0, {str(internal)!r})")
    assert Path(found["prompts"]) == internal / "docatlas" / "resources" / "prompts"
    assert found["profiles"] == found["loaded"] == profile_folders()
    assert found["icons"] == sorted(p.name for p in (RESOURCES / "icons").iterdir())

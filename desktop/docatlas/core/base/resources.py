"""Where DocAtlas's bundled files are: `resource_dir("prompts")`, `resource_dir("icons")`.

They live in the repository's top-level `resources/` folder and are found in three places:
- installed from a wheel: the package `docatlas.resources` (pyproject.toml maps `resources/` to it),
- in the PyInstaller bundle: `docatlas/resources/` inside the bundle (packaging/bundle.py puts them there),
- in a source checkout or an editable install: `resources/` beside `desktop/`.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from docatlas.core.base.errors import DocAtlasError

SOURCE_FOLDER = "desktop"  # the folder holding the package in a source checkout
RESOURCES_FOLDER = "resources"


def resource_roots() -> list[Path]:
    """Where the bundled folders may be, in the order they are looked for."""
    package = Path(str(resources.files("docatlas")))
    roots = [package / RESOURCES_FOLDER]  # a wheel, the PyInstaller bundle
    if package.parent.name == SOURCE_FOLDER:  # a source checkout, an editable install
        roots.append(package.parent.parent / RESOURCES_FOLDER)
    return roots


def resource_dir(name: str) -> Path:
    """The bundled folder `name` ("prompts", "icons"); DocAtlasError when no installation has it."""
    for root in resource_roots():
        if (root / name).is_dir():
            return root / name
    raise DocAtlasError(f"DocAtlas's bundled {name} folder is missing ({RESOURCES_FOLDER}/{name}); "
                        "reinstall DocAtlas.")

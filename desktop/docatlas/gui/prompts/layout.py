"""The Prompts tab's widgets: the grouped list of prompts, import and export, the profile in use,
the banner about chunks built with other prompts, and the editor beside the list."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from docatlas.core.jobs.auto_profile import AUTO
from docatlas.core.prompts.catalog import available_profiles, catalog, load_profile
from docatlas.gui.prompts.editor import PromptEditor

KEY_ROLE = Qt.ItemDataRole.UserRole


def build_panel(panel: Any) -> None:
    """Create the tab's widgets on `panel` (the `PromptsPanel`, not imported: no cycle) and lay them out."""
    panel.tree = QTreeWidget()
    panel.tree.setHeaderHidden(True)
    panel.tree.currentItemChanged.connect(lambda item, _old: panel.show_item(item))
    panel._items: dict[str, QTreeWidgetItem] = {}
    groups: dict[str, QTreeWidgetItem] = {}
    for item in catalog():
        group = groups.get(item.group)
        if group is None:
            group = groups[item.group] = QTreeWidgetItem(panel.tree, [group_title(item.group)])
            group.setFlags(Qt.ItemFlag.ItemIsEnabled)
        child = QTreeWidgetItem(group, [item.title])
        child.setData(0, KEY_ROLE, item.key)
        child.setToolTip(0, f"{item.key}: {item.purpose}")
        panel._items[item.key] = child
    panel._groups = groups
    panel.import_button = QPushButton("Import…")
    panel.import_button.setToolTip("A prompt set exported by DocAtlas, or a LightRAG or GraphRAG prompt file "
                                  "(read, never run)")
    panel.import_button.clicked.connect(lambda: panel.sets.import_prompts())
    panel.export_button = QPushButton("Export…")
    panel.export_button.setToolTip("Write this workspace's prompts to one JSON file")
    panel.export_button.clicked.connect(lambda: panel.sets.export_prompts())
    panel.profile_combo = QComboBox()
    panel.profile_combo.addItem("auto", AUTO)
    panel.profile_combo.setItemData(0, "Try each profile on the first chunks and keep the one that gives the most "
                                    "entities the text backs, for this model (remembered per model)",
                                    Qt.ItemDataRole.ToolTipRole)
    for name in available_profiles():
        panel.profile_combo.addItem(name, name)
        panel.profile_combo.setItemData(panel.profile_combo.count() - 1, load_profile(name).description,
                                       Qt.ItemDataRole.ToolTipRole)
    panel.profile_combo.activated.connect(lambda index: panel.sets.use_profile(panel.profile_combo.itemData(index)))
    panel.stale_banner = QFrame(frameShape=QFrame.Shape.StyledPanel)
    panel.stale_label = QLabel(wordWrap=True)
    panel.reextract_button = QPushButton("Extract Again…")
    panel.reextract_button.clicked.connect(lambda: panel.sets.extract_again())
    banner = QHBoxLayout(panel.stale_banner)
    banner.addWidget(panel.stale_label, 1)
    banner.addWidget(panel.reextract_button)
    panel.stale_banner.hide()
    panel.editor = PromptEditor()

    panel.search_box = QLineEdit(placeholderText="Find a prompt (Ctrl+F)", clearButtonEnabled=True)
    panel.search_box.textChanged.connect(lambda text: filter_tree(panel.tree, text))
    left = QWidget()
    column = QVBoxLayout(left)
    column.setContentsMargins(0, 0, 0, 0)
    column.addWidget(panel.search_box)
    column.addWidget(panel.tree, 1)
    row = QHBoxLayout()
    row.addWidget(panel.import_button)
    row.addWidget(panel.export_button)
    column.addLayout(row)
    split = QSplitter(Qt.Orientation.Horizontal)
    split.addWidget(left)
    split.addWidget(panel.editor)  # not in a scroll area: its Save row stays in sight (the tabs scroll)
    split.setStretchFactor(1, 3)
    split.setSizes([280, 900])
    top = QHBoxLayout()
    top.addWidget(QLabel("Extraction profile in use:"))
    top.addWidget(panel.profile_combo)
    top.addStretch(1)
    layout = QVBoxLayout(panel)
    layout.addLayout(top)
    layout.addWidget(panel.stale_banner)
    layout.addWidget(split, 1)


def filter_tree(tree: QTreeWidget, text: str) -> None:
    """Show only the prompts whose title or key holds `text` (case-insensitive), with their groups."""
    needle = text.strip().casefold()
    for g in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(g)
        shown = 0
        for c in range(group.childCount()):
            child = group.child(c)
            hit = not needle or needle in child.text(0).casefold() or needle in str(child.data(0, KEY_ROLE)).casefold()
            child.setHidden(not hit)
            shown += hit
        group.setHidden(not shown)
        group.setExpanded(bool(needle) or group.isExpanded())


def group_title(group: str) -> str:
    """The list's title for a group of prompts."""
    return {"merge": "Merging", "query": "Questions"}.get(group, f"Extraction: {group}")

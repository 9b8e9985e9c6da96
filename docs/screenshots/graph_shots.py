"""The graph explorer's screenshots, light and dark: communities, a local graph, the tables.

Called from make_screenshots.py (or alone: `QT_QPA_PLATFORM=offscreen python docs/screenshots/graph_shots.py`).
The graph is the bench's realistic corpus (a dozen companies with their people, places and
topics), merged into a temporary store.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for extra in (ROOT / "desktop", ROOT / "tests", ROOT / "bench"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from shooting import save as _save  # noqa: E402
from shooting import settle as _settle  # noqa: E402
from shooting import wait_until as _wait  # noqa: E402

SIZE = (1366, 720)








def graph_shots(app: QApplication) -> None:
    """Grab the explorer coloured by community, a local graph and the tables, in light and dark."""
    from core.test_edits_helpers import build_graph, open_store
    from docatlas.gui.theme import apply_theme
    from graph_view import realistic_corpus

    folder = Path(tempfile.mkdtemp(prefix="docatlas-graph-shots-"))
    store = build_graph(open_store(folder), realistic_corpus())
    for theme in ("light", "dark"):
        _shots_in(app, store, folder, theme)
    apply_theme(app, "light")


def _shots_in(app: QApplication, store, folder: Path, theme: str) -> None:
    """The three pictures in one theme."""
    from docatlas.gui.graph import GraphExplorer
    from docatlas.gui.graph.palette import BY_COMMUNITY
    from docatlas.gui.theme import apply_theme

    settings = QSettings(str(folder / f"explorer-{theme}.ini"), QSettings.Format.IniFormat)
    apply_theme(app, theme)
    explorer = GraphExplorer(store, settings=settings)
    explorer.resize(*SIZE)
    explorer.show()
    loaded: list[bool] = []
    explorer.loaded.connect(lambda: loaded.append(True))
    explorer.reload()
    _wait(lambda: loaded)
    _wait(lambda: not (explorer.model.community < 0).all())
    bar = explorer.toolbar
    bar.colour.setCurrentIndex(bar.colour.findData(BY_COMMUNITY))
    _wait(lambda: explorer.canvas.look is not None and explorer.canvas.look.theme.name == theme)
    explorer.canvas.fit()
    _wait(lambda: explorer.canvas.settled)
    _save(explorer, f"graph-communities-{theme}")
    explorer.search("Harbor Analytics")
    local = explorer.open_local_graph(explorer.selected_keys[0])
    local.depth.setValue(2)
    _wait(lambda: local.local is not None and local.canvas.settled and local.depth.value() == 2)
    _settle(500)
    _wait(lambda: local.canvas.settled)
    _save(local, f"graph-local-{theme}")
    local.close()
    bar.table.setChecked(True)
    _settle(300)
    explorer.search("Northwind Labs")
    explorer.canvas.fit()
    _wait(lambda: explorer.canvas.settled)
    _save(explorer, f"graph-table-{theme}")
    explorer.shutdown()
    explorer.close()


if __name__ == "__main__":
    graph_shots(QApplication.instance() or QApplication(sys.argv[:1]))

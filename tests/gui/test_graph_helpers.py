"""Shared set-up for the graph explorer's GUI tests: a built store, an explorer on it, and a
prompter that answers from a script (no modal dialog ever opens). Holds no tests itself.

Test modules import the fixtures by their function names (`explorer_fixture`, …); the
tests ask for them by fixture name (`explorer`, `store`, `answers`)."""

from __future__ import annotations

import pytest
from core.test_edits_helpers import build_graph, open_store
from docatlas.gui.graph import GraphExplorer
from PySide6.QtCore import QPointF, QSettings

LOAD_MS = 20_000


class Answers:
    """Stands in for `dialogs.Prompter`: each question pops the scripted answer for its kind."""

    def __init__(self):
        self.script: dict[str, list] = {}
        self.asked: list[tuple[str, tuple]] = []

    def add(self, kind: str, answer: object) -> None:
        """Answer the next question of `kind` (text, long_text, choose, entity, confirm, save_path) with this."""
        self.script.setdefault(kind, []).append(answer)

    def _answer(self, kind: str, args: tuple) -> object:
        self.asked.append((kind, args))
        if not self.script.get(kind):
            pytest.fail(f"unexpected question: {kind} {args[1:]}")
        return self.script[kind].pop(0)

    def text(self, *args, **kwargs):
        return self._answer("text", args)

    def long_text(self, *args, **kwargs):
        return self._answer("long_text", args)

    def choose(self, *args, **kwargs):
        return self._answer("choose", args)

    def confirm(self, *args, **kwargs):
        return self._answer("confirm", args)

    def entity(self, parent, title, label, names, describe):
        """The merge box: answers from the script, and keeps what the box would say about the answer."""
        answer = self._answer("entity", (parent, title, label))
        self.described = describe(answer or "")
        self.offered = names
        return answer

    def save_path(self, *args, **kwargs):
        return self._answer("save_path", args)

    def inform(self, *args, **kwargs):
        self.asked.append(("inform", args))


@pytest.fixture(name="store")
def store_fixture(tmp_path):
    """The test corpus, merged into a graph."""
    with open_store(tmp_path) as s:
        yield build_graph(s)


@pytest.fixture(name="answers")
def answers_fixture() -> Answers:
    """The scripted prompter."""
    return Answers()


@pytest.fixture(name="settings")
def settings_fixture(tmp_path) -> QSettings:
    """The explorer's remembered state, in a file of this test's own."""
    return QSettings(str(tmp_path / "explorer.ini"), QSettings.Format.IniFormat)


@pytest.fixture(name="explorer")
def explorer_fixture(qtbot, store, answers, settings):
    """An explorer on the store, loaded and shown; its background work is stopped afterwards."""
    widget = GraphExplorer(store, prompter=answers, settings=settings)
    qtbot.addWidget(widget)
    widget.resize(1200, 800)
    widget.show()
    with qtbot.waitSignal(widget.loaded, timeout=LOAD_MS):
        widget.reload()
    yield widget
    assert widget.shutdown(10_000)


def screen_point(explorer: GraphExplorer, key: str) -> QPointF:
    """Where a node is on the canvas."""
    x, y = explorer.model.xy[explorer.model.index[key]]
    return explorer.canvas.view_transform().map(QPointF(x, y))


def shown_keys(explorer: GraphExplorer) -> set[str]:
    """Keys of the nodes the canvas shows."""
    return {explorer.model.keys[i] for i in explorer.visible_nodes()}


def edit_and_reload(qtbot, explorer: GraphExplorer, action) -> None:
    """Do something that edits the store, and wait until the graph has been reloaded after it
    and the side panel shows the selection again."""
    with qtbot.waitSignal(explorer.loaded, timeout=LOAD_MS):
        action()
    qtbot.waitUntil(lambda: not explorer.reading_details, timeout=LOAD_MS)


def select(qtbot, explorer: GraphExplorer, keys: list[str]) -> None:
    """Select entities by key and wait until the side panel shows them (details are read in the background)."""
    with qtbot.waitSignal(explorer.selectionChanged, timeout=LOAD_MS):
        explorer.select_keys(keys)

"""While a run goes on, its changing stage text never moves the documents table.

A stage text that wrapped onto a second line ("Extracting entities and relations (still
reading files: 3 of 12 read)") and back used to shrink and grow the table above it: a whole
repaint of the table on the GUI thread each time, while the run's threads held the GIL.
"""

from __future__ import annotations

from gui_helpers import wait_idle
from PySide6.QtCore import QEvent, QObject
from test_gui_fit import LAPTOPS, on_screen


class Resizes(QObject):
    """Counts the changes of a widget's height while `counting` is true (its width changes when
    rows enough to scroll bring the scroll bar)."""

    def __init__(self, widget, counting):
        super().__init__()
        self.count, self.counting = 0, counting
        widget.installEventFilter(self)

    def eventFilter(self, watched, event):  # Qt's spelling
        if event.type() == QEvent.Type.Resize and self.counting() \
                and event.size().height() != event.oldSize().height():
            self.count += 1
        return False


def test_the_table_keeps_its_size_while_the_stage_text_changes(qtbot, make_window, server, tmp_path):
    server.latency = 0.05
    first, folder = tmp_path / "first", tmp_path / "many"
    first.mkdir()
    (first / "first.txt").write_text("Acme Corporation hired Jane Doe in Paris.", encoding="utf-8")
    folder.mkdir()
    for n in range(30):
        (folder / f"letter number {n:02d} from the archive of the northern office.txt").write_text(
            f"Letter {n}. Acme Corporation hired Jane Doe in Paris. Bob Smith met her in Lyon.", encoding="utf-8")
    window = make_window()
    width, height = LAPTOPS["1280x720"]
    window.resize(width, height)
    qtbot.waitUntil(lambda: window.width() == width, timeout=5000)
    panel = window.documents_panel
    add_folder = window.actions_by_name["add_folder"]  # Documents > Add Folder…, as a person starts a run
    window.interaction.choose_folder = lambda *a, **k: first
    add_folder.trigger()  # the table has rows: no empty-workspace hint comes and goes
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: not panel.empty_hint.isVisible(), timeout=5000)
    drawn = []  # the stage texts of the run's redraws; counting starts once the run's start is laid out
    window.ingestion.redraw_due.connect(lambda: drawn.append(panel.stage_label.text()))
    resizes = Resizes(panel.table.viewport(), lambda: window.ingestion.busy and len(drawn) >= 2)

    window.interaction.choose_folder = lambda *a, **k: folder
    add_folder.trigger()
    wait_idle(qtbot, window)
    assert len(drawn) >= 2  # the run was drawn while it went on
    assert resizes.count == 0  # and the table never moved for what it said
    assert on_screen(panel.stage_label, window) and panel.stage_label.toolTip()

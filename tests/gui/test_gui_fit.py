"""The window on a laptop: it opens within the screen, and at 1366x768 and 1280x720 every
control a person needs is on screen, not clipped by a scroll area or cut by the window edge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QWidget

# the window's own area on such a screen: a desktop panel and the title bar take about 60 px
DESKTOP = Path(__file__).resolve().parents[2] / "desktop"
LAPTOPS = {"1366x768": (1366, 768 - 60), "1280x720": (1280, 720 - 60)}


def on_screen(widget: QWidget, window: QWidget) -> bool:
    """Shown, wholly inside `window`, and not clipped by any parent (scroll areas included)."""
    if not widget.isVisible() or widget.width() <= 0 or widget.height() <= 0:
        return False
    top_left = widget.mapTo(window, QPoint(0, 0))
    if not window.rect().contains(QRect(top_left, widget.size())):
        return False
    return widget.visibleRegion().boundingRect().size() == widget.size()


OPEN_AND_MEASURE = """
import json, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
from docatlas.core.base.settings import Settings
from docatlas.gui.main_window import MainWindow
window = MainWindow(Path(sys.argv[1]), settings=Settings(), check_ollama=False)
window.show()
app.processEvents()
area = window.screen().availableGeometry()
frame = window.frameGeometry()
print(json.dumps([area.width(), area.height(), frame.x(), frame.y(), frame.width(), frame.height()]))
window.shutdown()
"""


@pytest.mark.parametrize("laptop", sorted(LAPTOPS))
def test_the_window_opens_sized_to_the_screen_never_larger(tmp_path, laptop):
    width, height = (int(n) for n in laptop.split("x"))
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": laptop, "x": 0, "y": 0, "width": width, "height": height,
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}",
           "PYTHONPATH": os.pathsep.join([str(DESKTOP), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", OPEN_AND_MEASURE, str(tmp_path / "ws")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    area_w, area_h, x, y, w, h = json.loads(done.stdout.strip().splitlines()[-1])
    assert (area_w, area_h) == (width, height)
    assert 0 <= x and 0 <= y and x + w <= width and y + h <= height


@pytest.mark.parametrize("laptop", sorted(LAPTOPS))
def test_every_main_control_is_reachable_on_a_laptop(qtbot, make_window, laptop):
    width, height = LAPTOPS[laptop]
    window = make_window()
    window.resize(width, height)
    qtbot.waitUntil(lambda: window.size().width() == width and window.size().height() == height)
    QApplication.processEvents()
    chat = window.chat_panel
    always = {"status bar": window.statusBar(), "Ask": chat.ask_button, "mode": chat.mode_box,
              "question": chat.question_edit, "chat model": chat.model_box,
              "Ollama status": window.ollama_button, "workspace switcher": window.workspace_bar.switcher}
    documents = window.documents_panel
    per_tab = {
        0: {"Add Files": documents.add_files_button, "Pause": documents.pause_button,
            "Cancel": documents.cancel_button, "Retry Failed": documents.retry_button,
            "Delete": documents.delete_button, "filter": documents.search_box, "table": documents.table},
        2: {"Save": window.prompts_tab.editor.save_button, "Discard": window.prompts_tab.editor.discard_button,
            "Reset": window.prompts_tab.editor.reset_button},
    }
    for tab, controls in per_tab.items():
        window.tabs.setCurrentIndex(tab)
        if tab == 2:  # a prompt is open in the editor
            window.prompts_tab.tree.setCurrentItem(next(iter(window.prompts_tab._items.values())))
        QApplication.processEvents()
        hidden = [name for name, widget in {**always, **controls}.items() if not on_screen(widget, window)]
        assert hidden == [], f"not reachable at {laptop} on tab {window.tabs.tabText(tab)}: {hidden}"


@pytest.mark.parametrize("laptop", sorted(LAPTOPS))
def test_the_ollama_dialog_fits_a_laptop_with_its_buttons_visible(qtbot, make_window, laptop):
    width, height = LAPTOPS[laptop]
    window = make_window()
    dialog = window.open_ollama_setup()
    qtbot.waitUntil(lambda: dialog.last_probe is not None, timeout=10_000)
    QApplication.processEvents()
    assert dialog.height() <= height and dialog.width() <= width, dialog.size()
    buttons = [dialog.check_button, dialog.pull_button, *dialog.buttons.findChildren(QWidget)]
    buttons = [b for b in buttons if b.isVisible()]
    assert dialog.buttons.button(QDialogButtonBox.StandardButton.Save) in buttons
    assert all(on_screen(b, dialog) for b in buttons)

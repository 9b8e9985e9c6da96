"""Screenshots of sentence-level citations: a chat answer whose uncited sentence is underlined,
and the passage it opens with exactly the cited sentence highlighted (names in blue).

Called from make_screenshots.py (or alone:
`QT_QPA_PLATFORM=offscreen python docs/screenshots/citation_shots.py`). Writes
chat-citations.png and passage-sentence.png next to this file; everything runs in a
temporary folder against the local test server.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for extra in (ROOT / "desktop", ROOT / "tests", ROOT / "tests" / "gui"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from PySide6.QtWidgets import QApplication  # noqa: E402
from shooting import save as _save  # noqa: E402
from shooting import wait_until as _wait  # noqa: E402

ANSWER = ("**Maria Lopez** founded Harbor Analytics in Lisbon [C1]. Jonas Weber joined the company "
          "as chief engineer [C1]. It is probably the largest sensor maker in Portugal.")
HISTORY = (
    "Harbor Analytics began in a rented room above a fish market. The first sensors were built by hand, "
    "and the early customers were two small marinas on the coast.\n\n"
    "Maria Lopez founded Harbor Analytics in Lisbon after ten years of measuring tides for the port "
    "authority. She wanted sensors that a harbour master could read without a laptop. "
    "Jonas Weber joined Harbor Analytics as chief engineer in its second year. "
    "He redesigned the housing so that it survived a winter in salt water.\n\n"
    "By the fifth year the company sold its sensors to ports in three countries. "
    "Maria Lopez still signs every contract herself, and she keeps the first prototype on her desk.\n\n"
    "Priya Nair, who leads Northwind Labs, met Maria Lopez at a conference in Porto and ordered forty "
    "sensors the same week."
)








def citation_shots(app: QApplication) -> None:
    """Ask a question in the real window and grab the answer and the passage it opens."""
    from chat_script import GuiResponder
    from core.helpers import settings_for
    from fixtures.ollama_fixture import default_models
    from fixtures.ollama_server import FakeOllama

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ.update(DOCATLAS_DATA_DIR=str(base / "Case files"), DOCATLAS_CONFIG_DIR=str(base / "config"),
                          DOCATLAS_LOG_DIR=str(base / "logs"))
        from docatlas.core.base import paths
        from docatlas.core.base.settings import save_settings
        from docatlas.gui.main_window import MainWindow
        from docatlas.gui.theme import apply_theme

        apply_theme(app, "light")
        with FakeOllama(default_models()) as server:
            server.responder = GuiResponder(ANSWER)
            corpus = base / "corpus"
            corpus.mkdir()
            (corpus / "harbor-history.txt").write_text(HISTORY, encoding="utf-8")
            settings = settings_for(server)
            save_settings(settings, paths.settings_path())
            window = MainWindow(paths.data_dir(), settings=settings)
            window.resize(1366, 768)
            window.show()
            _wait(lambda: window.last_probe is not None)
            window.documents_panel.add_paths([corpus])
            _wait(lambda: window.ingestion.last_progress is not None and not window.ingestion.busy)
            chat = window.chat_panel
            chat.question_edit.setPlainText("Who founded Harbor Analytics, and who is its engineer?")
            chat.ask()
            _wait(lambda: chat.task is None)
            _save(window, "chat-citations")
            chat.turns[-1].reference_buttons[0].click()
            _wait(lambda: chat.viewer is not None and chat.viewer.isVisible())
            chat.viewer.resize(760, 480)
            _save(chat.viewer, "passage-sentence")
            chat.viewer.close()
            window.shutdown()
            window.close()


if __name__ == "__main__":
    citation_shots(QApplication.instance() or QApplication(sys.argv[:1]))

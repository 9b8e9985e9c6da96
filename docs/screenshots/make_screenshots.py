"""Make the README screenshots: the real window, offscreen, against the test Ollama server.

    QT_QPA_PLATFORM=offscreen python docs/screenshots/make_screenshots.py

Writes documents.png, documents-running.png, graph-during-run.png, chat.png, passage.png, ollama-setup.png and
dark.png next to this file, and laptop-{light,dark}-{documents,graph,prompts,ollama}.png at
1366x768. Everything runs in temporary folders; nothing is contacted
but the local test server.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT / "desktop"), str(ROOT / "tests"), str(ROOT / "tests" / "gui")]

from chat_script import GuiResponder  # noqa: E402
from core.helpers import DOCUMENTS, long_document, settings_for  # noqa: E402
from fixtures.ollama_fixture import default_models  # noqa: E402
from fixtures.ollama_server import FakeOllama  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from shooting import save, settle, wait_until  # noqa: E402

sys.path.insert(0, str(HERE))
from citation_shots import citation_shots  # noqa: E402
from graph_shots import graph_shots  # noqa: E402

ANSWER = ("**Maria Lopez** founded *Harbor Analytics* in Lisbon [C1], and **Jonas Weber** later joined it "
          "as chief engineer [C1].\n\nThe company also sells sensors to **Northwind Labs**, which Priya Nair "
          "leads [C2].\n\n- Founder: Maria Lopez\n- Chief engineer: Jonas Weber\n- Customer: Northwind Labs")








def main() -> int:
    """Drive the window through its panels and grab each."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ.update(DOCATLAS_DATA_DIR=str(base / "Case files"), DOCATLAS_CONFIG_DIR=str(base / "config"),
                          DOCATLAS_LOG_DIR=str(base / "logs"))
        from docatlas.core.base import paths
        from docatlas.core.base.settings import save_settings
        from docatlas.gui.main_window import MainWindow
        from docatlas.gui.theme import apply_theme

        if os.environ["QT_QPA_PLATFORM"] == "offscreen":  # a laptop's screen, 1366x768
            screen = base / "screen.json"
            screen.write_text('{"screens": [{"name": "laptop", "x": 0, "y": 0, "width": 1366, "height": 768, '
                              '"logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}')
            os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={screen}"
        app = QApplication.instance() or QApplication(sys.argv[:1])
        apply_theme(app, "light")
        with FakeOllama(default_models()) as server:
            server.responder = GuiResponder(ANSWER)
            corpus = base / "corpus"
            corpus.mkdir()
            for name, text in DOCUMENTS.items():
                (corpus / name).write_text(text, encoding="utf-8")
            (corpus / "letters.txt").write_text(long_document(150), encoding="utf-8")
            (corpus / "scan.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
            settings = settings_for(server, chunking__chunk_tokens=120, chunking__overlap_tokens=12)
            save_settings(settings, paths.settings_path())
            window = MainWindow(paths.data_dir(), settings=settings)
            window.resize(1366, 768)  # a laptop screen
            window.show()
            wait_until(lambda: window.last_probe is not None)

            server.latency = 0.05
            window.documents_panel.add_paths([corpus])
            wait_until(lambda: window.ingestion.last_progress is not None
                       and window.ingestion.last_progress.stage == "extract"
                       and window.ingestion.last_progress.chunks_done >= 12)
            window.documents_panel.refresh()
            wait_until(lambda: not window.documents_panel.reading)  # the list is read off the GUI thread
            save(window, "documents-running")
            server.latency = 1.0  # the run goes on while the graph so far is shown
            window.tabs.setCurrentWidget(window.graph_tab)  # the graph so far: rings and dashes not read yet
            wait_until(lambda: getattr(window.graph_tab, "model", None) is not None)
            settle(1500)
            save(window, "graph-during-run")
            window.tabs.setCurrentIndex(0)
            server.latency = 0.0
            wait_until(lambda: not window.ingestion.busy)
            window.documents_panel.refresh()
            wait_until(lambda: not window.documents_panel.reading)
            save(window, "documents")

            chat = window.chat_panel
            chat.question_edit.setPlainText("Who founded Harbor Analytics, and who works there?")
            chat.ask()
            wait_until(lambda: chat.task is None)
            save(window, "chat")
            chat.turns[-1].reference_buttons[0].click()
            wait_until(lambda: chat.viewer is not None and chat.viewer.isVisible())  # the passage is read first
            chat.viewer.resize(760, 520)
            save(chat.viewer, "passage")
            chat.viewer.close()

            window.tabs.setCurrentWidget(window.graph_tab)
            wait_until(lambda: getattr(window.graph_tab, "model", None) is not None)
            settle(1500)
            save(window, "window-graph")
            window.tabs.setCurrentWidget(window.prompts_tab)
            wait_until(lambda: not window.prompts_tab.reading)  # the tab reads when it is shown
            settle(500)
            save(window, "window-prompts")
            window.tabs.setCurrentIndex(0)

            dialog = window.open_ollama_setup()
            wait_until(lambda: dialog.last_probe is not None)
            dialog.pull_edit.setText("llama3.2:3b")
            dialog.pull()
            wait_until(lambda: dialog.pull_task is None)
            wait_until(lambda: dialog.probe_task is None)
            dialog.adjustSize()
            save(dialog, "ollama-setup")
            dialog.close()

            apply_theme(app, "dark")
            window.tabs.setCurrentIndex(0)
            save(window, "dark")
            laptop_shots(app, window)
            window.shutdown()
            window.close()
        graph_shots(app)  # the graph explorer's own pictures (graph_shots.py)
    citation_shots(app)  # a cited answer and the sentence it opens (citation_shots.py)
    return 0


def laptop_shots(app: QApplication, window) -> None:
    """laptop-<theme>-<tab>.png and laptop-<theme>-ollama.png: every tab and the Ollama dialog at
    1366x768 (the window's own area on that screen), light and dark."""
    from docatlas.gui.theme import apply_theme

    for theme in ("light", "dark"):
        apply_theme(app, theme)
        window.resize(1366, 768 - 60)  # a desktop panel and the title bar take about 60 px
        for index in range(window.tabs.count()):
            window.tabs.setCurrentIndex(index)
            settle(600)
            save(window, f"laptop-{theme}-{window.tabs.tabText(index).lower()}")
        window.tabs.setCurrentIndex(0)
        dialog = window.open_ollama_setup()
        wait_until(lambda d=dialog: d.last_probe is not None)
        settle(300)
        save(dialog, f"laptop-{theme}-ollama")
        dialog.close()
    apply_theme(app, "light")


if __name__ == "__main__":
    sys.exit(main())

"""The chat panel: streamed answers, references that open the passage, safe Markdown, history, stop."""

from __future__ import annotations

import json

import pytest
from chat_script import ANSWER, GuiResponder
from docatlas.gui.conversations import FILENAME, Turn
from docatlas.gui.views.chat_turn import TurnWidget
from gui_helpers import wait_idle
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QGuiApplication, QPalette, QTextDocument
from PySide6.QtWidgets import QApplication

QUESTION = "Who founded Harbor Analytics?"


@pytest.fixture
def ready(qtbot, make_window, corpus):
    """A window whose workspace holds the extracted corpus."""
    window = make_window()
    window.documents_panel.add_paths([corpus])
    wait_idle(qtbot, window)
    return window


def ask(qtbot, window, question: str = QUESTION, mode: str | None = None) -> list[str]:
    """Type a question, press Ask, wait for the answer; return the streamed pieces."""
    chat = window.chat_panel
    if mode:
        chat.set_mode(mode)
    chat.question_edit.setPlainText(question)
    qtbot.mouseClick(chat.ask_button, Qt.MouseButton.LeftButton)
    pieces: list[str] = []
    assert chat.task is not None
    chat.task.progressed.connect(pieces.append)
    qtbot.waitUntil(lambda: chat.task is None, timeout=20_000)
    return pieces


def test_answer_streams_and_its_references_open_the_passage(qtbot, ready, server):
    chat = ready.chat_panel
    assert chat.mode == "mix"
    pieces = ask(qtbot, ready)
    assert len(pieces) > 3 and "".join(pieces) == ANSWER  # word by word, as Ollama streams
    (turn,) = chat.turns
    assert turn.turn.answer == ANSWER and turn.turn.mode == "mix"
    assert "Maria Lopez founded Harbor Analytics" in turn.answer_view.toPlainText()  # rendered Markdown
    assert "**" not in turn.answer_view.toPlainText()
    buttons = turn.reference_buttons
    first = turn.turn.references[0]
    assert buttons and buttons[0].text().startswith(f"[C1] {first['title']}") and first["cited"] is True

    qtbot.mouseClick(buttons[0], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: chat.viewer is not None and chat.viewer.isVisible(), timeout=5000)  # read off-thread
    viewer = chat.viewer
    assert viewer is not None and viewer.isVisible()
    assert viewer.title_label.text() == first["title"]
    assert "(the cited sentence highlighted)" in viewer.where_label.text()
    assert first["document"] in viewer.where_label.text()
    (chunk,) = ready.workspace.store.query("SELECT text FROM chunks WHERE id = ?", (first["chunk"],))
    assert first["quote"] and first["quote"] in chunk["text"]
    assert viewer.highlighted_text() == first["quote"]  # exactly the cited sentence, not the chunk
    assert turn.unsupported_marks == ["See the notes for more."]  # the one sentence citing nothing
    assert "1 sentence cites no source" in turn.note_label.text()

    qtbot.mouseClick(turn.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == ANSWER
    answer_calls = [r for r in server.requests if r["path"] == "/api/chat"
                    and "You answer questions" in json.dumps(r["body"])]
    assert answer_calls and answer_calls[-1]["body"]["messages"][-1]["content"] == QUESTION


def test_a_streaming_answer_is_shown_as_it_arrives(qtbot):
    turn = TurnWidget(Turn(question="Who?"))
    qtbot.addWidget(turn)
    turn.show()
    turn.start()
    assert not turn.answer_view.isVisibleTo(turn) and "Looking" in turn.note_label.text()
    for piece in ("Maria ", "**Lopez** ", "founded it."):
        turn.append(piece)
    qtbot.waitUntil(lambda: "Maria Lopez founded" in turn.answer_view.toPlainText(), timeout=2000)
    assert turn.answer_view.isVisibleTo(turn) and turn.note_label.text() == "Answering…"


def test_markdown_is_inert_no_html_no_remote_images_links_ask_first(qtbot, ready, server):
    image = f"http://{server.host}/tracker.png"
    server.responder = GuiResponder(f"Hello <b>bold</b><script>alert(1)</script> ![pixel]({image}) "
                                    "[notes](https://example.org/notes) [local](file:///etc/passwd)")
    ask(qtbot, ready)
    turn = ready.chat_panel.turns[-1]
    text = turn.answer_view.toPlainText()
    assert "<b>bold</b>" in text and "<script>" in text  # raw HTML is shown as text, never run
    assert not any(r["path"] == "/tracker.png" for r in server.requests)  # the image was never fetched
    assert turn.answer_view.document().resource(QTextDocument.ResourceType.ImageResource, QUrl(image)) is None

    asked: list[str] = []
    opened: list[QUrl] = []
    ready.interaction.open_url = opened.append
    ready.interaction.confirm = lambda title, text, *a, **k: asked.append(text) or False
    turn.answer_view.anchorClicked.emit(QUrl("https://example.org/notes"))
    assert asked and "https://example.org/notes" in asked[-1] and opened == []
    ready.interaction.confirm = lambda *a, **k: True
    turn.answer_view.anchorClicked.emit(QUrl("https://example.org/notes"))
    assert opened == [QUrl("https://example.org/notes")]
    turn.answer_view.anchorClicked.emit(QUrl("file:///etc/passwd"))
    assert len(opened) == 1 and "only web links" in ready.statusBar().currentMessage()


def test_history_is_kept_per_workspace_and_new_chat_starts_over(qtbot, ready, make_window, server):
    ask(qtbot, ready)
    ask(qtbot, ready, "And who joined it as chief engineer?")
    last = [r for r in server.requests if r["path"] == "/api/chat" and "You answer questions" in json.dumps(r["body"])]
    contents = [m["content"] for m in last[-1]["body"]["messages"]]
    assert QUESTION in contents and ANSWER in contents  # the earlier turn is the model's history
    assert (ready.workspace.folder / FILENAME).exists()
    folder = ready.workspace.folder
    ready.close()

    again = make_window(folder)
    chat = again.chat_panel
    assert [t.turn.question for t in chat.turns] == [QUESTION, "And who joined it as chief engineer?"]
    assert chat.turns[0].reference_buttons  # references survive a restart
    qtbot.mouseClick(chat.new_chat_button, Qt.MouseButton.LeftButton)
    assert chat.turns == [] and chat.history_box.count() == 2
    chat.history_box.activated.emit(1)
    assert len(chat.turns) == 2


def test_stop_ends_an_answer_and_a_failure_is_shown_in_the_turn(qtbot, ready, server):
    chat = ready.chat_panel
    server.latency = 0.3
    chat.question_edit.setPlainText(QUESTION)
    qtbot.mouseClick(chat.ask_button, Qt.MouseButton.LeftButton)
    assert chat.stop_button.isEnabled()
    qtbot.mouseClick(chat.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: chat.task is None, timeout=10_000)
    assert chat.turns[-1].turn.stopped and "Stopped" in chat.turns[-1].note_label.text()
    assert chat.ask_button.isEnabled()

    server.latency = 0.0
    server.stop()
    ask(qtbot, ready, "Who leads Northwind Labs?")
    turn = chat.turns[-1].turn
    assert "not reachable" in turn.error and "start Ollama" in turn.error
    assert "not reachable" in ready.statusBar().currentMessage()
    assert ready.ollama_dialog is not None and ready.ollama_dialog.isVisible()


def _has_colour(widget, colour: QColor, tolerance: int = 40) -> bool:
    """Some pixel of the widget as drawn is close to `colour`."""
    image = widget.grab().toImage()
    for y in range(0, image.height()):
        for x in range(0, image.width()):
            pixel = image.pixelColor(x, y)
            if (abs(pixel.red() - colour.red()) + abs(pixel.green() - colour.green())
                    + abs(pixel.blue() - colour.blue())) <= tolerance:
                return True
    return False


def test_reference_links_take_the_link_colour_of_the_theme_chosen_in_the_view_menu(qtbot, ready):
    from docatlas.gui.theme import dark_palette

    ask(qtbot, ready)
    button = ready.chat_panel.turns[0].reference_buttons[0]
    dark_link = dark_palette().color(QPalette.ColorRole.Link)
    try:
        ready.actions_by_name["theme_dark"].trigger()
        QApplication.processEvents()
        assert _has_colour(button, dark_link)
        ready.actions_by_name["theme_light"].trigger()
        QApplication.processEvents()
        light_link = QApplication.palette().color(QPalette.ColorRole.Link)
        assert _has_colour(button, light_link) and not _has_colour(button, dark_link)
    finally:
        ready.actions_by_name["theme_light"].trigger()

"""The status bar's Ollama indicator: host, chat model, embedding model, reachable or not."""

from __future__ import annotations

from PySide6.QtWidgets import QToolButton, QWidget

from docatlas.core.base.settings import Settings
from docatlas.core.llm.admin import OllamaProbe, host_label, is_remote, remote_hosts
from docatlas.gui.formatting import button_text, plain_tip

GREEN, RED, AMBER, GREY = "#2e7d32", "#c62828", "#ef6c00", "#757575"


class OllamaStatusButton(QToolButton):
    """Always shows the connection; a click opens the Ollama set-up dialog."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAutoRaise(True)
        self.setToolTip("Ollama connection; click to set it up")
        self.state = "checking"

    def show_status(self, settings: Settings, probe: OllamaProbe | None) -> None:
        """Show `settings`' host and models, and what the last check found (None: checking)."""
        o = settings.ollama
        remote = is_remote(o.host)
        if probe is None:
            self.state, color, word = "checking", GREY, "checking…"
        elif not probe.reachable:
            self.state, color, word = "unreachable", RED, "not reachable"
        elif probe.missing:
            self.state, color, word = "missing", AMBER, "not installed: " + ", ".join(probe.missing)
        else:
            self.state, color, word = "ready", GREEN, "reachable"
        text = f"● Ollama {word} · {o.model}"  # host and embedding model: in the tooltip
        if remote:
            text += " · REMOTE: documents leave this computer"
            color = AMBER if self.state == "ready" else color
        self.setText(button_text(text))
        self.setStyleSheet(f"QToolButton {{ color: {color}; }}")
        tip = [f"Ollama at {host_label(o.host)}: {word}", f"Chat model: {o.model}",
               f"Embedding model: {o.embed_model}"]
        if probe is not None and probe.error:
            tip.append(probe.error)
        if probe is not None and probe.hosts:  # several hosts: each one's check
            tip.extend(f"{host_label(p.host)}: {'reachable' if p.reachable else 'not reachable'}" for p in probe.hosts)
        if remote and "," in o.host:
            names = ", ".join(remote_hosts(o.host))
            tip.append(f"Not this computer: {names}; the text of your documents is sent there.")
        elif remote:
            tip.append("This host is not this computer: the text of your documents is sent to it.")
        tip.append("Click to set up Ollama.")
        self.setToolTip(plain_tip("\n".join(tip)))

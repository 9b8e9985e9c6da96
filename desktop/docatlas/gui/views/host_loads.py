"""Each Ollama host's load during a run, under the Documents tab's progress bar.

Shown when the host setting names several hosts (a pool): one line per host with its calls
per minute, calls answered, calls in flight of its slots and its state ("set aside" while a
failed host waits to be tried again: its calls go to the other hosts, the title counts
them and the run's stage label names them), and "another computer" for a host that is not
this one. It draws from the run's last `Progress.hosts`, which the job reports on every chunk.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from docatlas.core.base.progress import HostLoad, Progress
from docatlas.gui.formatting import plain_tip
from docatlas.gui.ingestion import IngestionController
from docatlas.gui.run_state import host_name, hosts_aside_text
from docatlas.gui.theme import restyle

REMOTE_COLOR, ASIDE_COLOR = "#ef6c00", "#c62828"


def host_text(load: HostLoad) -> str:
    """One host's line: "gpu1:11434 — another computer · 11.8 calls/min · 120 calls · 3/3 in flight · ok"."""
    name = host_name(load)
    where = " — another computer" if load.remote else " — this computer"
    failed = f" · {load.failures} failed" if load.failures else ""
    return (f"{name}{where} · {load.calls_per_minute:.1f} calls/min · {load.calls} calls{failed} · "
            f"{load.in_flight}/{load.slots} in flight · {load.state}")


class HostLoadsView(QFrame):
    """A line per Ollama host of the pool while a run calls the model."""

    def __init__(self, controller: IngestionController, parent: QWidget | None = None):
        super().__init__(parent, frameShape=QFrame.Shape.StyledPanel)
        self.controller = controller
        self.title = QLabel("Ollama hosts:")
        self.rows: list[QLabel] = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(6, 2, 6, 2)
        self._layout.setSpacing(0)
        self._layout.addWidget(self.title)
        controller.redraw_due.connect(self.show_progress)
        self.hide()

    def show_progress(self) -> None:
        """Show the hosts of the run's last progress (hidden when it has none)."""
        last = self.controller.last_progress
        loads = last.hosts if isinstance(last, Progress) else ()
        self.setVisible(bool(loads))
        aside = sum(load.state != "ok" for load in loads)  # the stage label names them (`run_state`)
        self.title.setText(f"Ollama hosts ({aside} set aside):" if aside else "Ollama hosts:")
        self.title.setToolTip(plain_tip(hosts_aside_text(loads)) if aside else "")  # names: never markup
        while len(self.rows) < len(loads):
            row = QLabel(textFormat=Qt.TextFormat.PlainText)  # host names come from the user's settings
            self.rows.append(row)
            self._layout.addWidget(row)
        for row, load in zip(self.rows, loads, strict=False):
            row.setText(host_text(load))
            color = ASIDE_COLOR if load.state != "ok" else (REMOTE_COLOR if load.remote else "")
            restyle(row, f"color: {color};" if color else "")
            tips = ["Not this computer: the text of your documents is sent to it."] if load.remote else []
            if load.state != "ok":
                tips.append("Not answering: its calls go to the other hosts; it is tried again now and then.")
            row.setToolTip(" ".join(tips))
        for extra in self.rows[len(loads):]:
            extra.hide()
        for row in self.rows[:len(loads)]:
            row.show()

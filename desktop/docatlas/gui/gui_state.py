"""What the window remembers between runs: size, layout, theme, last and recent workspaces.

Kept as `gui.json` in the config dir (next to settings.json), written atomically; an
unreadable file is ignored (the window then starts with its defaults).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from docatlas.core.base import paths

log = logging.getLogger("docatlas.gui.state")

MAX_RECENT = 8
THEMES = ("system", "light", "dark")


@dataclass
class GuiState:
    """The remembered window state."""

    geometry: str = ""  # base64 of QWidget.saveGeometry()
    window_state: str = ""  # base64 of QMainWindow.saveState() (docks, toolbars)
    tab: int = 0
    theme: str = "system"
    chat_mode: str = ""
    last_workspace: str = ""
    recent: list[str] = field(default_factory=list)

    def remember_workspace(self, path: Path) -> None:
        """Make `path` the last workspace and the first of the recent list."""
        text = str(Path(path).resolve())
        self.last_workspace = text
        self.recent = [text, *[p for p in self.recent if p != text]][:MAX_RECENT]

    def forget_workspace(self, path: str) -> None:
        """Drop a workspace that can no longer be opened from the recent list."""
        self.recent = [p for p in self.recent if p != path]
        if self.last_workspace == path:
            self.last_workspace = ""


def state_path() -> Path:
    """Where the state is kept."""
    return paths.config_dir() / "gui.json"


def load_state(path: Path | None = None) -> GuiState:
    """Read the state; defaults for anything missing or unreadable."""
    path = path or state_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return GuiState()
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable %s: %s", path, exc)
        return GuiState()
    known = {f.name: f for f in fields(GuiState)}
    values = {k: v for k, v in data.items() if k in known} if isinstance(data, dict) else {}
    state = GuiState(**values)
    if state.theme not in THEMES:
        state.theme = "system"
    state.recent = [str(p) for p in state.recent if isinstance(p, str)][:MAX_RECENT]
    return state


def save_state(state: GuiState, path: Path | None = None) -> None:
    """Write the state atomically; a failure is logged, never shown (nothing is lost but layout)."""
    path = path or state_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(state), indent=2), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("could not save the window state to %s: %s", path, exc)

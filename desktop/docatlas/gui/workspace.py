"""One open workspace: its folder, a read-only connection for the GUI thread, its chats.

The GUI thread reads through `store` (SQLite WAL lets it read while a background task
writes through a connection of its own); background jobs open their own `Store` on
`db_path`. Opening a workspace creates (and migrates) its database first, so that two
connections never race to create it.
"""

from __future__ import annotations

from pathlib import Path

from docatlas.core.base import paths
from docatlas.core.storage.database import Store
from docatlas.gui.conversations import ConversationBook


class Workspace:
    """An open workspace (one data directory, one graph)."""

    def __init__(self, folder: Path):
        self.folder = paths.data_dir(folder)
        self.db_path = paths.database_path(self.folder)
        self.store = Store(self.db_path)
        self.conversations = ConversationBook.load(self.folder)
        self.is_open = True

    @property
    def name(self) -> str:
        """The folder's name, for titles."""
        return self.folder.name or str(self.folder)

    def pending_chunks(self) -> int:
        """Chunks a run stopped before extracting (they resume on the next run)."""
        return int(self.store.counts()["chunks_pending"])

    def close(self) -> None:
        """Save the chats and close the read connection."""
        if self.is_open:
            self.is_open = False
            self.conversations.save()
            self.store.close()

"""One open workspace: its folder, its database, its chats, and the counts last read.

The GUI thread runs no SQL. Reads run on background tasks through `read_job`, each on a
connection of its own (SQLite WAL lets them read while a run writes). Opening a workspace
opens `store` first, which creates (and migrates) its database, so that two connections
never race to create it; the graph tab is handed `store` but uses only its path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from docatlas.core.base import paths
from docatlas.core.storage.database import Store
from docatlas.core.storage.read_models import WorkspaceCounts
from docatlas.gui.conversations import ConversationBook
from docatlas.gui.tasks import Job, TaskContext

# The background reads of the window (a moment each): closing the window does not wait for them.
READ_DOCUMENTS, READ_PASSAGE, READ_DELETION = "Reading the documents", "Reading the passage", \
    "Reading what the documents support"
READ_PROMPTS = "Reading the prompts"
READ_OLLAMA, READ_REPORTS = "Checking Ollama", "Reading whether topic reports exist"
READ_PREVIEW = "Reading a document's preview"
READS = frozenset((READ_DOCUMENTS, READ_PASSAGE, READ_DELETION, READ_PROMPTS, READ_OLLAMA, READ_REPORTS,
                   READ_PREVIEW))
READ_FOLDERS = "Looking at the linked folders"
READS = READS | {READ_FOLDERS}

class Workspace:
    """An open workspace (one data directory, one graph)."""

    def __init__(self, folder: Path):
        self.folder = paths.data_dir(folder)
        self.db_path = paths.database_path(self.folder)
        self.store = Store(self.db_path)
        self.conversations = ConversationBook.load(self.folder)
        self.counts = WorkspaceCounts()  # as last read off the GUI thread (see WorkspaceReader)
        self.counts_known = False  # True once a read has landed
        self.storing = False  # a run is storing documents: counts read during it fall behind
        self.open_store: Callable[[], Store] = lambda: Store(self.db_path)  # a reading connection
        self.is_open = True

    @property
    def known_empty(self) -> bool:
        """No documents, as last read, and no run storing some now."""
        return self.counts_known and self.counts.documents == 0 and not self.storing

    @property
    def name(self) -> str:
        """The folder's name, for titles."""
        return self.folder.name or str(self.folder)

    def pending_chunks(self) -> int:
        """Chunks a run stopped before extracting (they resume on the next run), as last read."""
        return self.counts.chunks_pending

    def read_job(self, read: Callable[[Store], Any]) -> Job:
        """A background job that runs `read` on a connection of its own and returns its result."""
        def job(_context: TaskContext) -> Any:
            with self.open_store() as store:
                return read(store)
        return job

    def close(self) -> None:
        """Save the chats and close the connection."""
        if self.is_open:
            self.is_open = False
            self.conversations.save()
            self.store.close()

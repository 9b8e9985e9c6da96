"""Chat conversations of one workspace, kept as `conversations.json` in its data dir.

A conversation is a list of turns (question, answer, mode, references, warnings). The
model sees earlier turns of the current conversation as history; "New chat" starts a
fresh conversation and keeps the old ones to come back to.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

log = logging.getLogger("docatlas.gui.conversations")

FILENAME = "conversations.json"
MAX_CONVERSATIONS = 50
REFERENCE_KEYS = ("chunk", "document_id", "document", "title", "page", "page_end", "chunk_index", "label",
                  "cited", "start", "end", "quote", "page_chunk", "names")


@dataclass
class Turn:
    """One question and its answer."""

    question: str
    answer: str = ""
    mode: str = ""
    references: list[dict] = field(default_factory=list)  # Reference.to_json() without the text
    warnings: list[str] = field(default_factory=list)
    stopped: bool = False  # the user stopped it, or it failed: not shown to the model again
    error: str = ""

    @property
    def complete(self) -> bool:
        """An answer the model may see as history."""
        return bool(self.answer) and not self.stopped and not self.error


@dataclass
class Conversation:
    """A chat: its turns, oldest first."""

    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started: float = field(default_factory=time.time)
    turns: list[Turn] = field(default_factory=list)

    @property
    def title(self) -> str:
        """The first question, shortened; "New chat" while empty."""
        if not self.turns:
            return "New chat"
        text = " ".join(self.turns[0].question.split())
        return text if len(text) <= 60 else text[:57] + "..."

    def history(self) -> list[dict]:
        """Earlier turns as chat messages for the model (complete ones only)."""
        messages: list[dict] = []
        for turn in self.turns:
            if turn.complete:
                messages += [{"role": "user", "content": turn.question},
                             {"role": "assistant", "content": turn.answer}]
        return messages


def slim_reference(data: dict) -> dict:
    """A reference as kept on disk (the passage text is read from the store when opened)."""
    return {k: data.get(k) for k in REFERENCE_KEYS}


class ConversationBook:
    """All conversations of a workspace; the last one is current."""

    def __init__(self, path: Path):
        self.path = path
        self.conversations: list[Conversation] = []
        self.current_id = ""

    @classmethod
    def load(cls, workspace: Path) -> ConversationBook:
        """Read the workspace's conversations (an unreadable file starts a fresh book)."""
        book = cls(workspace / FILENAME)
        try:
            data = json.loads(book.path.read_text(encoding="utf-8"))
            for raw in data.get("conversations", []):
                turns = [Turn(**{k: v for k, v in t.items() if k in Turn.__dataclass_fields__})
                         for t in raw.get("turns", [])]
                book.conversations.append(Conversation(raw["id"], raw.get("started", 0.0), turns))
            book.current_id = str(data.get("current", ""))
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, KeyError) as exc:
            log.warning("ignoring unreadable %s: %s", book.path, exc)
            book.conversations = []
        if not any(c.id == book.current_id for c in book.conversations):
            book.new_conversation()
        return book

    @property
    def current(self) -> Conversation:
        """The conversation shown in the chat panel."""
        return next(c for c in self.conversations if c.id == self.current_id)

    def new_conversation(self) -> Conversation:
        """Start a fresh conversation (an empty current one is reused)."""
        if self.current_id and any(c.id == self.current_id for c in self.conversations) and not self.current.turns:
            return self.current
        conversation = Conversation()
        self.conversations.append(conversation)
        self.conversations = self.conversations[-MAX_CONVERSATIONS:]
        self.current_id = conversation.id
        return conversation

    def switch_to(self, conversation_id: str) -> Conversation:
        """Make another conversation current."""
        if any(c.id == conversation_id for c in self.conversations):
            self.current_id = conversation_id
        return self.current

    def save(self) -> None:
        """Write the book atomically; failures are logged (the chat still works)."""
        data = {
            "current": self.current_id,
            "conversations": [
                {"id": c.id, "started": c.started, "turns": [asdict(t) for t in c.turns]}
                for c in self.conversations if c.turns or c.id == self.current_id
            ],
        }
        try:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("could not save the conversations to %s: %s", self.path, exc)

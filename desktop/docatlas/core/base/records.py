"""Typed records: what the parser reads out of a model reply for one chunk."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class EntityRecord:
    """One entity as the model described it in one chunk."""

    name: str
    type: str
    description: str
    confidence: float | None = None


@dataclass(frozen=True)
class RelationRecord:
    """One relation between two entity names as the model described it in one chunk."""

    source: str
    target: str
    keywords: str
    description: str
    strength: float | None = None


@dataclass
class ParseResult:
    """Everything recovered from one reply.

    `status` is "ok" when at least one record came out, "empty" when the reply held
    no records (prose, a refusal or nothing), "refusal" when the model declined.
    """

    entities: list[EntityRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)
    content_keywords: list[str] = field(default_factory=list)
    status: str = "ok"
    completed: bool = False  # the completion marker was seen

    @property
    def record_count(self) -> int:
        """Entities plus relations."""
        return len(self.entities) + len(self.relations)

"""Conversation history for the prompts: the last turns that fit their token budget.

History is a list of chat messages as Ollama takes them, `{"role": "user" | "assistant",
"content": ...}`, oldest first (the GUI's chat panel keeps one such list per conversation).
"""

from __future__ import annotations

from collections.abc import Sequence

from docatlas.core.base.tokens import count_tokens


def recent_history(history: Sequence[dict], turns: int, budget: int) -> list[dict]:
    """The last `turns` question/answer pairs, oldest dropped first until within `budget` tokens."""
    messages = [{"role": str(m.get("role")), "content": str(m.get("content") or "").strip()}
                for m in history if m.get("role") in ("user", "assistant") and m.get("content")]
    messages = messages[-2 * turns:] if turns > 0 else []
    costs = [count_tokens(m["content"]) + 4 for m in messages]
    while messages and (sum(costs) > budget or messages[0]["role"] != "user"):
        messages.pop(0)
        costs.pop(0)
    return messages


def history_text(messages: Sequence[dict]) -> str:
    """The history as plain lines, for prompts that take it as text."""
    names = {"user": "User", "assistant": "Assistant"}
    return "\n".join(f"{names.get(m['role'], m['role'])}: {' '.join(m['content'].split())}" for m in messages)

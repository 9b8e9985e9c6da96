"""A scripted model for the GUI tests and screenshots: extraction, keywords and answers."""

from __future__ import annotations

import json
import re

from fixtures.scripted_model import lightrag_responder

ANSWER = ("**Maria Lopez** founded Harbor Analytics [C1]. Jonas Weber joined it as chief engineer [C1]. "
          "See [the notes](https://example.org/notes) for more.")
ANSWER_MARK = "You answer questions about the user's own documents"


class GuiResponder:
    """Answers extraction prompts (lightrag records), keyword prompts (JSON) and answer prompts."""

    def __init__(self, answer: str = ANSWER):
        self.answer = answer

    def __call__(self, request: dict) -> str:
        """The reply text for one /api/chat request."""
        fmt = request.get("format")
        if isinstance(fmt, dict) and "high_level" in fmt.get("properties", {}):
            prompt = "\n".join(str(m.get("content") or "") for m in request.get("messages") or [])
            question = prompt.rsplit("Question:", 1)[-1]
            names = re.findall(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+", question)
            return json.dumps({"high_level": ["companies"], "low_level": names or ["company"]})
        messages = request.get("messages") or []
        if messages and ANSWER_MARK in str(messages[0].get("content") or ""):
            return self.answer
        return lightrag_responder(request)

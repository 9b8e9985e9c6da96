"""Search keywords for a question: high-level (themes) and low-level (names, details).

The model is asked for one JSON object; the reply is read tolerantly (any key with
"high"/"low" in it, lists or comma-separated strings). When the reply holds nothing
usable, the question's own content words stand in. Replies are cached by the LLM client.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from dataclasses import dataclass

from docatlas.core.base.errors import Cancelled, LLMError, ModelNotFound, OllamaTimeout, OllamaUnreachable
from docatlas.core.llm.protocol import LLM
from docatlas.core.retrieval.jsonreply import parse_json_object, string_list
from docatlas.core.retrieval.templates import fill

log = logging.getLogger("docatlas.retrieval")

KEYWORD_SCHEMA = {
    "type": "object",
    "properties": {
        "high_level": {"type": "array", "items": {"type": "string"}},
        "low_level": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["high_level", "low_level"],
}
MAX_KEYWORDS = 12
WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
_NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)+")
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    out over own same she should so some such than that the their theirs them then there these
    they this those through to too under until up very was we were what when where which while
    who whom why will with would you your yours tell know please give list show explain describe
    did does say says said document documents text mention mentioned""".split()
)

IRREGULAR = {"met": "meet", "paid": "pay", "bought": "buy", "sold": "sell", "wrote": "write", "led": "lead",
             "made": "make", "knew": "know", "saw": "see", "gave": "give", "took": "take", "held": "hold",
             "ran": "run", "sent": "send", "spoke": "speak", "told": "tell", "hired": "hire", "won": "win"}


@dataclass(frozen=True)
class Keywords:
    """What to search for: themes for relations, concrete terms for entities."""

    high_level: tuple[str, ...]
    low_level: tuple[str, ...]
    source: str = "model"  # "model", or "fallback" when taken from the question itself

    def to_json(self) -> dict:
        """A plain dict for JSON output and the answer cache."""
        return {"high_level": list(self.high_level), "low_level": list(self.low_level),
                "source": self.source}


def content_words(text: str) -> list[str]:
    """Words of a text worth searching for: no stop words, no single letters; first-seen order."""
    words = [w for w in WORD.findall(text) if len(w) > 1 and w.casefold() not in STOPWORDS]
    return list(dict.fromkeys(words))


@functools.lru_cache(maxsize=16384)
def stem(word: str) -> str:
    """A crude English stem: irregular past forms, then -ing/-ed/-es/-s/-er cut (each word once a process)."""
    w = word.casefold()
    if w in IRREGULAR:
        return IRREGULAR[w]
    for suffix in ("ing", "ed", "es", "s", "er"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            w = w[: -len(suffix)]
            break
    return w[:-1] if len(w) > 3 and w[-1] == w[-2] else w


def named_things(question: str) -> list[str]:
    """The capitalised multi-word names of a question, without a leading question word ("Did ...")."""
    names = []
    for match in _NAME.finditer(question):
        words = match.group(0).split()
        while words and words[0].casefold() in STOPWORDS:
            words = words[1:]
        if len(words) >= 2:
            names.append(" ".join(words))
    return list(dict.fromkeys(names))


def fallback_keywords(question: str) -> Keywords:
    """Keywords from the question itself: capitalised names are low-level, all content words both."""
    words = content_words(question)
    names = [m.group(0) for m in _NAME.finditer(question)]
    names = [n for n in names if n.split()[0].casefold() not in STOPWORDS] or []
    low = list(dict.fromkeys(names + words))[:MAX_KEYWORDS]
    return Keywords(tuple(words[:MAX_KEYWORDS]), tuple(low), "fallback")


def parse_keywords(reply: str) -> Keywords | None:
    """Keywords from a model reply, or None when it holds none."""
    data = parse_json_object(reply)
    if data is None:
        return None
    high: list[str] = []
    low: list[str] = []
    for key, value in data.items():
        name = str(key).lower()
        if "high" in name or "theme" in name:
            high += string_list(value)
        elif "low" in name or "entit" in name or name == "keywords":
            low += string_list(value)
    high, low = list(dict.fromkeys(high))[:MAX_KEYWORDS], list(dict.fromkeys(low))[:MAX_KEYWORDS]
    if not high and not low:
        return None
    return Keywords(tuple(high or low), tuple(low or high), "model")


def extract_keywords(llm: LLM, question: str, history: str = "",
                     cancel: threading.Event | None = None, template: str | None = None) -> Keywords:
    """Ask the model for keywords (with the workspace's `template`, else the bundled prompt);
    fall back to the question's words when it gives none.

    Raises the errors that would stop the answer anyway (Ollama down or slow, the model
    missing, the user stopping); any other model failure falls back quietly.
    """
    prompt = fill("keywords", {"keywords": template} if template is not None else None,
                  question=question.strip(), history=history.strip() or "(none)")
    try:
        reply = llm.chat([{"role": "user", "content": prompt}], format=KEYWORD_SCHEMA,
                         num_predict=256, cancel=cancel)
    except (Cancelled, OllamaUnreachable, OllamaTimeout, ModelNotFound):
        raise
    except LLMError as exc:
        log.warning("keyword extraction failed (%s); using the question's words", exc)
        return fallback_keywords(question)
    parsed = parse_keywords(reply.text)
    if parsed is None:
        log.info("keyword reply held no keywords; using the question's words")
        return fallback_keywords(question)
    return with_question_names(parsed, question)


def with_question_names(keywords: Keywords, question: str) -> Keywords:
    """The model's keywords with the question's own names first among the low-level ones.

    A small model may drop or misspell a name; the name as the person typed it is the
    surest seed for the entities.
    """
    low = list(dict.fromkeys([*named_things(question), *keywords.low_level]))[:MAX_KEYWORDS]
    return Keywords(keywords.high_level, tuple(low), keywords.source)

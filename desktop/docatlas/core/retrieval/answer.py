"""`ask`: a question in, a grounded answer with references out, streamed token by token.

Steps: answer cache (per question, mode, history, settings, models and graph version) ->
keywords (not for naive) -> question embeddings (or full-text only, with a warning) ->
context for the mode within the window -> the answer prompt with the history, streamed ->
references. Three answers need no model call: a question whose names are nowhere in the
documents, and an empty context, get "This is not in your documents" with no references
(`absent`); a count or list question in a graph mode is counted in the graph (`aggregate`).
A model answer that declines ("not in your documents") and cites nothing keeps no references.
While the model has not read every document yet (a run going on, or stopped), the answer says
so (`coverage`, and a note among its warnings): its graph part rests on the documents read so
far, its passages on the text of all of them. That note is never cached: it is counted afresh.
Every answer says what it rests on (`rests_on`): the model's graph, names found in text the
model has not read yet (the concept layer), passages, and what a reading budget read for it
(`read`, from `jobs.budgeted`: such an answer is never taken from the answer cache, and is put
there only when what was read is in the graph).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from docatlas.core.base.concepts import CONCEPT
from docatlas.core.base.errors import Cancelled, DocAtlasError, LLMError
from docatlas.core.base.settings import QuerySettings, Settings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.llm.ollama import STOPPED
from docatlas.core.llm.protocol import LLM
from docatlas.core.prompts.store import query_prompts
from docatlas.core.retrieval import aggregate
from docatlas.core.retrieval.absent import absent_answer, declined, unknown_names
from docatlas.core.retrieval.budget import context_window, free_room, reply_room, split
from docatlas.core.retrieval.cache import answer_key, answer_version, get_answer, put_answer
from docatlas.core.retrieval.context import ChunkItem, Context, assemble, fill_budget, render
from docatlas.core.retrieval.conversation import history_text, recent_history
from docatlas.core.retrieval.global_search import has_reports, map_reports, rank_reports, supporting_chunks
from docatlas.core.retrieval.keywords import Keywords, extract_keywords
from docatlas.core.retrieval.read_first import ReadFirst, add_unstored, prefer_read
from docatlas.core.retrieval.references import Reference, build_references, cited_labels
from docatlas.core.retrieval.retrieve import GRAPH_MODES, retrieve
from docatlas.core.retrieval.search import question_vectors
from docatlas.core.retrieval.templates import fill
from docatlas.core.storage.database import Store
from docatlas.core.storage.document_list import reading_progress

MODES = ("local", "global", "hybrid", "naive", "mix", "community")
NO_CONTEXT_ANSWER = "This is not in your documents: I found nothing about it in them."


class QueryError(DocAtlasError):
    """A question that cannot be asked as given (empty, or an unknown mode)."""


@dataclass(frozen=True)
class Answer:
    """An answer, the context it was given, and the references it drew on."""

    question: str
    answer: str
    mode: str
    context: Context
    references: tuple[Reference, ...]
    keywords: Keywords | None = None
    cached: bool = False
    warnings: tuple[str, ...] = ()
    computed: str = ""  # "count" or "list" (counted in the graph), "absent" (names not in the documents)
    coverage: tuple[int, int] | None = None  # (documents the model has read, documents) while it is not all
    read: ReadFirst | None = None  # what a reading budget read for this question

    @property
    def rests_on(self) -> str:
        """What the answer rests on, in one sentence: the layers and passages of its context."""
        items = [*self.context.entities, *self.context.relations]
        read = set(self.read.chunks) if self.read else set()
        parts = []
        graph = sum(1 for i in items if i.layer != CONCEPT and not (set(i.chunk_ids) & read))
        fresh = sum(1 for i in items if i.layer != CONCEPT and set(i.chunk_ids) & read)
        concept = sum(1 for i in items if i.layer == CONCEPT)
        if graph:
            parts.append(f"the graph the model built ({graph} entities and relations)")
        if fresh:
            parts.append(f"what the model read for this question ({fresh})")
        if concept:
            parts.append(f"names found in text the model has not read yet ({concept})")
        if self.context.chunks:
            parts.append(f"{len(self.context.chunks)} passage{'s' if len(self.context.chunks) != 1 else ''} "
                         "of the documents' text")
        if self.context.points:
            parts.append(f"{len(self.context.points)} findings of the community reports")
        if not parts:
            return "Rests on: nothing found in the documents." if self.computed != "absent" else (
                "Rests on: the names of every document (none of them is named).")
        return "Rests on: " + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]) + "."

    def to_json(self) -> dict:
        """`{answer, mode, context: {entities, relations, chunks}, references: [{document, page, chunk}]}`
        as `query --json` prints it, plus question, keywords, warnings and cached."""
        return {
            "question": self.question,
            "answer": self.answer,
            "mode": self.mode,
            "context": self.context.to_json(),
            "references": [r.to_json() for r in self.references],
            "keywords": self.keywords.to_json() if self.keywords else None,
            "warnings": list(self.warnings),
            "cached": self.cached,
            "computed": self.computed or None,
            **({"coverage": {"documents_read": self.coverage[0], "documents": self.coverage[1]}}
               if self.coverage else {}),
            **({"reading": self.read.to_json()} if self.read else {}),
            "rests_on": self.rests_on,
        }

    @classmethod
    def from_json(cls, data: dict, *, cached: bool = False) -> Answer:
        """Rebuild an answer from `to_json` output (plus the cache's context text)."""
        kw = data.get("keywords")
        return cls(
            question=data["question"], answer=data["answer"], mode=data["mode"],
            context=Context.from_json(data["mode"], data["context"], data.get("context_text", ""),
                                      data.get("context_tokens", 0)),
            references=tuple(Reference(**r) for r in data["references"]),
            keywords=Keywords(tuple(kw["high_level"]), tuple(kw["low_level"]), kw["source"]) if kw else None,
            cached=cached, warnings=tuple(data.get("warnings", ())), computed=data.get("computed") or "",
        )


def answer_messages(context: str, history: Sequence[dict], question: str, response_type: str,
                    template: str | None = None) -> list[dict]:
    """The chat messages of the answer call: instructions with the context, history, the question.

    `template` is the workspace's answer prompt for the mode (the bundled one when None). A
    template that places `{history}` itself gets the history as text instead of as messages.
    """
    values = {"context": context or "(nothing)", "response_type": response_type}
    if template is not None and "{history}" in template:
        values["history"] = history_text(history) or "(none)"
        history = ()
    system = fill("answer", {"answer": template} if template is not None else None, **values)
    return [{"role": "system", "content": system}, *history, {"role": "user", "content": question}]


def coverage_note(read: int, total: int) -> str:
    """What a reader of the answer should know while the model has read `read` of `total` documents."""
    return (f"The model has read {read:,} of {total:,} documents so far: names and links in this answer come "
            f"from those, passages from the text of all {total:,}; ask again later for a fuller answer.")


def ask(
    store: Store,
    llm: LLM,
    question: str,
    settings: Settings,
    mode: str | None = None,
    history: Sequence[dict] = (),
    on_token: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    use_cache: bool = True,
    read: ReadFirst | None = None,
) -> Answer:
    """Answer `question` from the workspace's graph and documents.

    `history` holds earlier chat messages ({"role", "content"}, oldest first); `on_token`
    receives the answer as it streams (all at once when it comes from a cache). Raises
    QueryError for an empty question or unknown mode, LLMError (one sentence) when the
    model fails, Cancelled when `cancel` is set; nothing is cached then. `use_cache=False` asks
    afresh (an evaluation timing the model); the answer is still stored for the next time.
    While the model has not read every document, the answer carries `coverage` and says so.
    `read`: what a reading budget read for the question first (`jobs.budgeted.ask_within`).
    """
    if read is not None and read.read:
        use_cache = False  # the answer rests on what was just read: not taken from the cache
    answer = _ask(store, llm, question, settings, mode, history, on_token, cancel, use_cache, read)
    if read is not None:
        answer = replace(answer, read=read, warnings=(*read.notes, read.summary(), *answer.warnings))
    read, total = reading_progress(store)
    if read >= total:
        return answer
    return replace(answer, coverage=(read, total), warnings=(*answer.warnings, coverage_note(read, total)))


def _ask(store: Store, llm: LLM, question: str, settings: Settings, mode: str | None, history: Sequence[dict],
         on_token: Callable[[str], None] | None, cancel: threading.Event | None, use_cache: bool,
         read: ReadFirst | None = None) -> Answer:
    """`ask` without the coverage note."""
    q = settings.query
    mode = (mode or q.mode).strip().lower()
    if mode not in MODES:
        raise QueryError(f"There is no query mode called {mode!r}; choose one of: {', '.join(MODES)}.")
    question = question.strip()
    if not question:
        raise QueryError("The question is empty; type a question and ask again.")
    turns = recent_history(history, q.history_turns, q.history_budget)
    prompts = query_prompts(store)  # the workspace's own prompts; a change to one is a new cache version
    version = answer_version(store)
    key = answer_key(question, mode, turns, settings, llm.model, version)
    hit = get_answer(store, key) if use_cache else None
    if hit is not None:
        answer = Answer.from_json(hit, cached=True)
        if on_token is not None:
            on_token(answer.answer)
        return answer

    _check(cancel)
    window = context_window(llm, settings)
    reply_tokens = reply_room(window, q)

    def room() -> int:
        """Room for the context under the answer prompt(s) this question may end up with (community may
        fall back to global); counted when first needed."""
        return min(free_room(window, answer_messages("", turns, question, q.response_type, prompts[f"answer_{m}"]),
                             reply_tokens) for m in ({mode, "global"} if mode == "community" else {mode}))

    warnings: list[str] = []
    keywords: Keywords | None = None
    used_mode = mode
    context: Context | None = None
    shortcut = _from_the_graph(store, question, mode, q, room)
    if shortcut is not None:
        text, context, computed = shortcut
        if on_token is not None:
            on_token(text)
        references = build_references(store, context, text, max(q.chunk_top_k, len(context.chunks)))
        answer = Answer(question, text, mode, context, references, None, False, (), computed)
        if read is None or not read.read or read.stored:
            put_answer(store, key, question, mode, version, {**answer.to_json(), "context_text": context.text,
                                                             "context_tokens": context.tokens})
        return answer
    context_room = room()
    _reserve_answer_context(llm, turns, question, q, prompts[f"answer_{mode}"], mode, context_room, reply_tokens)
    if mode == "community":
        if has_reports(store):
            context, found_warnings = _community_context(store, llm, question, settings, window, context_room,
                                                         cancel)
            warnings += found_warnings
        else:
            used_mode = "global"
            warnings.append("There are no community reports yet, so this answer used global mode; "
                            "they are written after the next ingestion.")
    if context is None:
        if used_mode != "naive":
            keywords = extract_keywords(llm, question, history_text(turns), cancel, prompts["keywords"])
        _check(cancel)
        vecs, found_warnings = question_vectors(store, llm, settings.ollama.embed_model, used_mode,
                                                question, keywords)
        warnings += found_warnings
        found = prefer_read(retrieve(store, used_mode, question, keywords, vecs, q), read)
        context = add_unstored(assemble(store, used_mode, found, q, context_room), read, context_room,
                               q.relation_budget)
    _check(cancel)

    if context.empty:
        text = NO_CONTEXT_ANSWER
        if on_token is not None:
            on_token(text)
    else:
        messages = answer_messages(context.text, turns, question, q.response_type, prompts[f"answer_{used_mode}"])
        text = _generate(llm, messages, reply_tokens, on_token, cancel)
    references = build_references(store, context, text, max(q.chunk_top_k, len(context.chunks)))
    if context.empty or declined(text, cited_labels(text)):
        references = ()  # nothing found, or the model says the documents do not hold it: no source to show
    answer = Answer(question, text, used_mode, context, references, keywords, False, tuple(warnings))
    if read is None or not read.read or read.stored:  # records held in memory only: not for later answers
        payload = {**answer.to_json(), "context_text": context.text, "context_tokens": context.tokens}
        put_answer(store, key, question, mode, version, payload)
    return answer


HEADINGS_SLACK = 64  # tokens of the context's headings and joins beyond its parts' budgets


def _reserve_answer_context(llm: LLM, turns: Sequence[dict], question: str, q: QuerySettings, template: str | None,
                            mode: str, room: int, reply_tokens: int) -> None:
    """Have the keyword call ask the context the answer will: Ollama reloads a model whenever a
    call's num_ctx changes, which made every question load the model twice."""
    reserve = getattr(llm, "reserve_context", None)
    if not callable(reserve):
        return
    messages = answer_messages("", turns, question, q.response_type, template)
    reserve(messages, split(q, mode, room).total + HEADINGS_SLACK, reply_tokens)


def _from_the_graph(store: Store, question: str, mode: str, q: QuerySettings,
                    room: Callable[[], int]) -> tuple[str, Context, str] | None:
    """An answer that needs no model: names nowhere in the documents, or a count or list question."""
    names = unknown_names(store, question)
    if names:
        return absent_answer(names), Context(mode), "absent"
    if mode not in GRAPH_MODES:
        return None
    agg = aggregate.compute(store, question)
    if agg is None:
        return None
    context = aggregate.context_for(store, agg, mode, q, room())
    labels = {(r.source_key, r.target_key): r.label for r in context.relations}
    return aggregate.answer_text(agg, labels), context, agg.kind


def _check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled(STOPPED)


def _generate(llm: LLM, messages: list[dict], reply_tokens: int, on_token: Callable[[str], None] | None,
              cancel: threading.Event | None) -> str:
    streamed: list[str] = []

    def relay(piece: str) -> None:
        streamed.append(piece)
        if on_token is not None:
            on_token(piece)

    reply = llm.chat(messages, num_predict=reply_tokens, cancel=cancel, on_token=relay)
    if not reply.text.strip():
        raise LLMError("The model gave an empty answer; ask again, or choose another model.")
    if not streamed and on_token is not None:  # a cached reply arrives whole
        on_token(reply.text)
    return reply.text


def _community_context(store: Store, llm: LLM, question: str, settings: Settings, window: int, room: int,
                       cancel: threading.Event | None) -> tuple[Context, list[str]]:
    """Map over the most related reports; the best points within `room` make the context."""
    q = settings.query
    vecs, warnings = question_vectors(store, llm, settings.ollama.embed_model, "community", question, None)
    rows = rank_reports(store, question, vecs.question, vecs.model, q.community_top_k, q.min_similarity)
    result = map_reports(store, llm, question, rows, settings, window, cancel)
    points, _ = fill_budget(result.points, room, lambda p, n: replace(p, label=f"P{n}"))
    chunks: list[ChunkItem] = supporting_chunks(store, result, q.chunk_top_k, max(64, q.chunk_budget // 2))
    text = render((), (), (), points)
    context = Context("community", chunks=tuple(chunks), reports=result.reports, points=tuple(points),
                      text=text, tokens=count_tokens(text) if text else 0)
    return context, warnings + list(result.warnings)

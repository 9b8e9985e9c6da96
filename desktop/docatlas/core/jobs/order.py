"""The order a run extracts its chunks in: what serves the person first.

0. Chunks a question read with its reading budget during a run (`storage.wanted`: their replies
   are cached already, so taking them costs no call and puts their records in the graph).
1. Chunks that match the questions already asked (`storage.interest`: the last 20, their
   names as phrases, else their longer words; BM25 over the full-text index, best first).
2. Then chunks dense in concept-layer names the model's graph does not have yet (the most
   such names first), so the graph gains the most names per call.
3. Then the rest, in document order (the order they were stored; ties everywhere keep it).

A run starts with the unread chunks that match the questions (`asked_first`), wherever they
are in the workspace; each stored file's chunks join as it is stored, and the workspace's
other unread chunks once every file is read. The priorities of a batch of chunks (a stored
document's, the sweep of the other pending ones) are two indexed queries over the batch's id
range, computed once when it joins the work; a pick is a heap pop. The whole queue is ranked
again (the same two queries over the remaining ids) every `RERANK_EVERY` picks, as the graph
learns names, and when a question is asked during the run (looked for at most every
`QUESTION_LOOK_S` seconds).
"""

from __future__ import annotations

import heapq
import itertools
import re
import time
from collections.abc import Iterable, Iterator

from docatlas.core.base.concepts import find_concepts
from docatlas.core.storage import interest, wanted
from docatlas.core.storage.database import ChunkRow, Store

QUESTION_CHUNKS = 1000  # chunks of a batch that the questions can put first
RERANK_EVERY = 200  # picks between two rankings of the whole queue
QUESTION_LOOK_S = 2.0
MAX_TERMS = 60
_WORD = re.compile(r"\w{4,}")
_COMMON = frozenset("what which where when whom whose does did have that this with from about there their they "
                    "them were been many much more most list everyone anyone someone tell show give find".split())


def question_expression(questions: Iterable[str]) -> str:
    """An FTS5 expression matching any of the questions' names (phrases), else their longer words."""
    terms: list[str] = []
    for question in questions:
        names = list(find_concepts(question).names.values())
        words = names or [w for w in _WORD.findall(question) if w.casefold() not in _COMMON]
        for term in words:
            quoted = '"' + " ".join(re.findall(r"\w+", term)) + '"'
            if quoted != '""' and quoted not in terms:
                terms.append(quoted)
    return " OR ".join(terms[:MAX_TERMS])


class Work:
    """The chunks waiting for a slot, best first (see the module)."""

    def __init__(self, store: Store):
        self.store = store
        self._rows: dict[int, ChunkRow] = {}
        self._place: dict[int, int] = {}  # chunk id -> its place in document order (when it joined)
        self._current: dict[int, tuple] = {}  # chunk id -> its heap entry now (older entries are skipped)
        self._heap: list[tuple] = []
        self._seq = itertools.count()
        self._picks = 0
        self._stamp = interest.questions_stamp(store)
        self._looked = time.monotonic()
        self._expression = question_expression(interest.recent_questions(store))
        self._wanted: set[int] = set(wanted.wanted_ids(store))

    def __len__(self) -> int:
        return len(self._rows)

    def __bool__(self) -> bool:
        return bool(self._rows)

    def __iter__(self) -> Iterator[ChunkRow]:
        """The waiting chunks, best first (a copy: taking them is `popleft`)."""
        return iter([self._rows[entry[-1]] for entry in sorted(self._current.values())])

    def extend(self, chunks: Iterable[ChunkRow]) -> None:
        """Chunks join the work, ranked as a batch."""
        batch = list(chunks)
        for chunk in batch:
            self._rows[chunk.id] = chunk
            self._place[chunk.id] = next(self._seq)
        self._rank([c.id for c in batch])

    def asked_first(self) -> list[ChunkRow]:
        """The unread chunks of the whole workspace that questions wanted read or that match the questions
        asked (a run starts with them)."""
        rows = interest.unread_rows(self.store, sorted(self._wanted))
        return rows + (interest.unread_matches(self.store, self._expression, QUESTION_CHUNKS) if self._expression
                       else [])

    def append(self, chunk: ChunkRow) -> None:
        """One chunk joins the work."""
        self.extend([chunk])

    def popleft(self) -> ChunkRow:
        """The best chunk waiting, taken off the work."""
        while True:
            entry = heapq.heappop(self._heap)
            chunk_id = entry[-1]
            if self._current.get(chunk_id) is entry:
                del self._current[chunk_id]
                del self._place[chunk_id]
                chunk = self._rows.pop(chunk_id)
                self._picks += 1
                if self._picks % RERANK_EVERY == 0:
                    self.rerank()
                return chunk

    def notice_questions(self) -> list[ChunkRow]:
        """Rank again when a question was asked or wanted chunks read since the last look (at most every
        few seconds); the wanted chunks not in the work yet, for the caller to add."""
        now = time.monotonic()
        if now - self._looked < QUESTION_LOOK_S:
            return []
        self._looked = now
        stamp, now_wanted = interest.questions_stamp(self.store), set(wanted.wanted_ids(self.store))
        if stamp == self._stamp and now_wanted <= self._wanted:
            return []
        fresh = sorted(now_wanted - self._wanted - set(self._rows))
        self._stamp, self._wanted = stamp, now_wanted
        self._expression = question_expression(interest.recent_questions(self.store))
        self.rerank()
        return interest.unread_rows(self.store, fresh)

    def rerank(self) -> None:
        """Rank every waiting chunk again (the graph has learned names, or a question was asked)."""
        self._heap, self._current = [], {}
        self._rank(list(self._rows))

    def _rank(self, ids: list[int]) -> None:
        if not ids:
            return
        low, high = min(ids), max(ids)
        asked = interest.question_matches(self.store, self._expression, low, high, QUESTION_CHUNKS) \
            if self._expression else {}
        names = interest.new_names(self.store, low, high)
        for chunk_id in ids:
            if chunk_id in self._wanted:
                key = (-1, 0.0)
            elif chunk_id in asked:
                key = (0, asked[chunk_id])
            else:
                key = (1, -names.get(chunk_id, 0))
            entry = (*key, self._place[chunk_id], chunk_id)
            self._current[chunk_id] = entry
            heapq.heappush(self._heap, entry)
        if len(self._heap) > 2 * len(self._current) + 64:  # drop the stale entries now and then
            self._heap = list(self._current.values())
            heapq.heapify(self._heap)

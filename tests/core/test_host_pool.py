"""Several Ollama hosts as one pool: real HTTP to several fake servers on 127.0.0.1.

The pool spreads calls by free slots, survives a host dying and coming back (its calls go to
the others, none is lost or failed), refuses a host without the model, and the host setting
reads `a*3, b` from settings.json, OLLAMA_HOST and `ingest --host`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest
from docatlas.core.base.errors import ModelNotFound
from docatlas.core.base.settings import OllamaSettings, load_settings
from docatlas.core.base.settings_hosts import HostEntry, HostSettingError, host_entries, total_slots
from docatlas.core.jobs.ingest import index
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.llm.protocol import MemoryCache
from docatlas.core.storage.database import Store
from fixtures.ollama_fixture import default_models
from fixtures.ollama_server import FakeOllama
from fixtures.scripted_model import lightrag_responder
from helpers import docatlas, long_document, settings_for

MODEL = "qwen2.5:7b"


@pytest.fixture
def three() -> Iterator[list[FakeOllama]]:
    servers = [FakeOllama(default_models()).start() for _ in range(3)]
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()


def pooled(hosts: str, **values) -> OllamaLLM:
    values = {"host": hosts, "timeout_s": 10.0, "retries": 1, "backoff_s": 0.01, "model": MODEL, **values}
    return OllamaLLM(OllamaSettings(**values))  # type: ignore[arg-type]


def chats(server: FakeOllama) -> int:
    return sum(1 for p in server.paths() if p == "/api/chat")


def wait_for(condition, what: str, limit: int = 100_000) -> None:
    """Wait (on events, in small steps) until `condition()`; fail with `what` if it never holds."""
    pause = threading.Event()
    for _ in range(limit):
        if condition():
            return
        pause.wait(0.01)
    raise AssertionError(f"never happened: {what}")


def ask(llm: OllamaLLM, text: str) -> str:
    return llm.chat([{"role": "user", "content": text}]).text


# -- the setting ------------------------------------------------------------------------------
def test_the_host_setting_reads_several_hosts_with_their_slots():
    assert host_entries("http://gpu1:11434*3, 127.0.0.1:11434") == (
        HostEntry("http://gpu1:11434", 3), HostEntry("127.0.0.1:11434", None))
    assert total_slots("gpu1:11434*3, gpu2:11434", parallel=2) == 5
    assert total_slots("127.0.0.1:11434", parallel=2) == 2  # one host: parallel, as before
    assert OllamaSettings(host="a:1*4, b:2*1").total_parallel == 5
    for bad, named in (("gpu1:11434*x", "gpu1:11434*x"), ("gpu1:11434*0", "gpu1:11434*0"),
                       ("a:1, , b:2", "empty entry"), ("a:1, a:1", "named twice")):
        with pytest.raises(HostSettingError, match=named.replace("*", r"\*")):
            host_entries(bad)


def test_settings_json_with_a_bad_host_entry_says_so_in_one_sentence(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"ollama": {"host": "gpu1:11434*3, gpu2:11434*many"}}), encoding="utf-8")
    settings = load_settings(path)
    assert settings.ollama.host == "127.0.0.1:11434"
    (warning,) = settings.warnings
    assert "gpu2:11434*many" in warning and "from 1 to 16" in warning and warning.count(";") <= 2
    path.write_text(json.dumps({"ollama": {"host": "gpu1:11434*3, gpu2:11434"}}), encoding="utf-8")
    assert load_settings(path).ollama.host == "gpu1:11434*3, gpu2:11434"


def test_ollama_host_with_commas_makes_a_pool(three, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"{three[0].host}*2,{three[1].host}")
    settings = load_settings(None)
    llm = OllamaLLM(settings.ollama)
    assert llm.pool is not None and [h.slots for h in llm.pool.hosts] == [2, settings.ollama.parallel]
    assert settings.ollama.total_parallel == 2 + settings.ollama.parallel


# -- spreading --------------------------------------------------------------------------------
def test_calls_go_to_the_hosts_with_free_slots(three):
    gate = threading.Event()

    def held(request: dict) -> str:
        gate.wait(30)
        return "held reply"

    for server in three:
        server.responder = held
    llm = pooled(f"{three[0].host}*1, {three[1].host}*2, {three[2].host}*3")
    replies: list[str] = []
    threads = [threading.Thread(target=lambda: replies.append(ask(llm, "q"))) for _ in range(6)]
    for thread in threads:
        thread.start()
    wait_for(lambda: sum(s.in_flight for s in three) == 6, "six calls in flight")
    assert [s.in_flight for s in three] == [1, 2, 3]  # each host got as many calls as it has slots
    loads = llm.host_loads()
    assert [(h.in_flight, h.slots) for h in loads] == [(1, 1), (2, 2), (3, 3)]
    assert not any(h.remote for h in loads)  # 127.0.0.1 is this computer
    gate.set()
    for thread in threads:
        thread.join()
    assert replies == ["held reply"] * 6
    assert [h.calls for h in llm.host_loads()] == [1, 2, 3]
    assert [s.max_in_flight for s in three] == [1, 2, 3]


def test_embeddings_and_cached_replies_use_the_pool_without_the_host_in_the_key(three):
    cache = MemoryCache()
    hosts = f"{three[0].host}*1, {three[1].host}*1"
    llm = OllamaLLM(OllamaSettings(host=hosts, model=MODEL, retries=0, backoff_s=0.01), cache=cache)
    assert ask(llm, "same question") == ask(llm, "same question")
    assert chats(three[0]) + chats(three[1]) == 1 and llm.cache_hits == 1
    vectors = llm.embed(["one", "two"])
    assert len(vectors) == 2
    assert sum(p == "/api/embed" for s in three[:2] for p in s.paths()) == 1


# -- a host dies, comes back ------------------------------------------------------------------
def test_a_host_that_dies_hands_its_calls_to_the_others_and_is_used_again_when_back(three):
    first, second, _ = three
    llm = pooled(f"{first.host}*2, {second.host}*2")
    assert ask(llm, "warm up") == "Paris is the capital of France."
    first.stop()  # Ollama quits on the first host
    replies = [ask(llm, f"question {i}") for i in range(12)]
    assert replies == ["Paris is the capital of France."] * 12  # nothing failed, nothing lost
    dead, alive = llm.host_loads()
    assert dead.state == "set aside" and dead.failures >= 1 and alive.state == "ok"
    answered_before = dead.calls
    first.start()  # back on the same port
    wait_for(lambda: (ask(llm, "again"), llm.host_loads()[0].calls > answered_before)[1],
             "the host that came back answers again", limit=3000)
    assert llm.host_loads()[0].state == "ok"


def test_a_host_dying_in_the_middle_of_a_reply_loses_no_call(three):
    first, second, _ = three
    first.down_s = 0.3
    llm = pooled(f"{first.host}*2, {second.host}*2")
    first.fail_next("die")  # cut under the reply, away for a moment, then back
    results: list[str] = []
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        for i in range(6):
            try:
                results.append(ask(llm, f"w{n} q{i}"))
            except BaseException as exc:
                errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(results) == 24
    assert llm.host_loads()[0].failures >= 1  # the cut call was counted against the host, not the chunk


def test_an_ingest_over_a_pool_with_a_dead_host_extracts_every_chunk(three, tmp_path):
    for server in three:
        server.responder = lightrag_responder
    three[2].stop()  # one host is down from the start: set aside at the check, the others carry on
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.txt").write_text(long_document(120), encoding="utf-8")
    hosts = ", ".join(f"{s.host}*2" for s in three)
    settings = settings_for(three[0], ollama__host=hosts, chunk_tokens=200, overlap_tokens=20)
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        events = list(index(store, [docs], settings))
    last = events[-1]
    assert last.stage == "done" and last.chunks_failed == 0 and last.chunks_done == last.chunks_total > 4
    shown = [e.hosts for e in events if e.hosts][-1]
    assert [h.host for h in shown] == [s.url for s in three]
    assert shown[2].state == "set aside" and shown[2].calls == 0
    assert shown[0].calls > 0 and shown[1].calls > 0


# -- the model must be on every host ----------------------------------------------------------
def test_a_host_without_the_model_is_refused_in_one_sentence(three):
    three[1].models = {"llama3.2:3b": {}}  # the second host lacks qwen2.5:7b
    llm = pooled(f"{three[0].host}, {three[1].host}*3")
    with pytest.raises(ModelNotFound) as caught:
        llm.check()
    message = caught.value.message
    assert three[1].host in message and MODEL in message and three[0].host not in message
    assert message.endswith(".") and ". " not in message and "ollama pull" in message  # one sentence


def test_ingest_with_repeated_host_refuses_a_host_without_the_model(three, tmp_path, capsys):
    three[1].models = {}
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Ada Byron wrote to Alan Turing.", encoding="utf-8")
    code, _out, err = docatlas(capsys, "ingest", str(docs), "--host", three[0].host, "--host", three[1].host,
                              "--model", MODEL)
    assert code == 1
    assert f"The model {MODEL} is not installed on the Ollama host {three[1].host}" in err
    assert chats(three[0]) == 0 and chats(three[1]) == 0


def test_ingest_with_repeated_host_spreads_the_chunks_and_prints_each_host(three, tmp_path, capsys):
    for server in three[:2]:
        server.responder = lightrag_responder
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.txt").write_text(long_document(80), encoding="utf-8")
    code, _out, err = docatlas(capsys, "ingest", str(docs), "--host", f"{three[0].host}*2", "--host",
                              f"{three[1].host}*1", "--model", MODEL, "--chunk-tokens", "200",
                              "--overlap-tokens", "20")
    assert code == 0, err
    assert chats(three[0]) > 0 and chats(three[1]) > 0
    lines = [line for line in err.splitlines() if "calls/min" in line]
    assert any(line.strip().startswith(three[0].host) and "/2 in flight" in line for line in lines)
    assert any(line.strip().startswith(three[1].host) and "/1 in flight" in line for line in lines)
    assert not any("another computer" in line for line in lines)  # both are 127.0.0.1
    before = chats(three[0]) + chats(three[1])
    embeds = sum(p == "/api/embed" for s in three[:2] for p in s.paths())
    assert embeds > 0  # the embeddings went through the pool too
    code, out, err = docatlas(capsys, "query", "Who wrote to Alan Turing?", "--host", three[0].host,
                              "--host", three[1].host, "--mode", "naive")
    assert code == 0, err
    assert chats(three[0]) + chats(three[1]) > before and out.strip()  # the answer came from the pool


def test_bad_host_flag_is_one_sentence(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Ada Byron wrote to Alan Turing.", encoding="utf-8")
    code, _, err = docatlas(capsys, "ingest", str(docs), "--host", "127.0.0.1:1*zero")
    assert code == 1 and "127.0.0.1:1*zero" in err and "Traceback" not in err


def test_the_progress_line_draws_a_line_per_host_under_the_bar_naming_remote_ones():
    import io

    from docatlas.cli.progress import ProgressLine
    from docatlas.core.base.progress import HostLoad, Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    hosts = (HostLoad("http://gpu1:11434", True, 3, 2, 40, 0, 12.5),
             HostLoad("http://127.0.0.1:11434", False, 2, 0, 10, 2, 3.0, "set aside"))
    screen = Terminal()
    bar = ProgressLine(screen, columns=100)
    bar.show(Progress(stage="extract", chunks_total=100, chunks_done=50, calls=50, hosts=hosts))
    bar.finish()
    lines = screen.getvalue().split("\n")
    assert lines[1] == "  gpu1:11434, another computer: 12.5 calls/min, 40 calls, 2/3 in flight, ok\x1b[K"
    assert lines[2].startswith("  127.0.0.1:11434: 3.0 calls/min, 10 calls, 2 failed, 0/2 in flight, set aside")
    assert lines[2].endswith("\x1b[2A\r")  # back up to the bar, which is redrawn in place
    plain = io.StringIO()
    piped = ProgressLine(plain)
    piped.show(Progress(stage="extract", hosts=hosts))
    piped.finish()
    assert "gpu1:11434, another computer: 12.5 calls/min" in plain.getvalue()
    assert "127.0.0.1:11434: 3.0 calls/min, 10 calls, 2 failed, 0/2 in flight, set aside" in plain.getvalue()

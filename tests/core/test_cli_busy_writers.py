"""Every CLI command that writes refuses, in one sentence, while another process writes the workspace.

The other process is real (it holds the workspace lock until the test closes its stdin);
the commands run through `docatlas.cli.main` in this process, which does not hold the lock.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
from docatlas.cli import ALWAYS_WRITE
from docatlas.cli.parser import build_parser
from docatlas.core.storage.database import Store
from fixtures.scripted_model import lightrag_responder
from helpers import docatlas, write_corpus

ROOT = Path(__file__).resolve().parents[2]
HOLDER = """import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from docatlas.core.storage.database import Store
from docatlas.core.storage.lock import workspace_writer
with Store(Path(sys.argv[2])) as store, workspace_writer(store, "rebuild"):
    print("held", flush=True)
    sys.stdin.read()
"""


def busy_sentence(pid: int) -> str:
    return (f"Another DocAtlas process (pid {pid}, rebuild) is writing to this workspace; wait for it to finish "
            "or run again with --wait.")


@pytest.fixture
def held(tmp_path):
    """A workspace another process is writing to: (workspace folder, that process)."""
    ws = tmp_path / "ws"
    with Store(ws / "docatlas.sqlite"):
        pass
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ROOT / "desktop"), str(ws / "docatlas.sqlite")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    yield ws, holder
    holder.stdin.close()
    holder.wait(timeout=60)


def writing_commands() -> set[str]:
    """The commands (and prompts verbs, as "prompts set") of the grammar that take --wait: those that write."""
    found = set()

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if any("--wait" in a.option_strings for a in sub._actions):
                        found.add(f"{prefix}{name}")
                    walk(sub, f"{prefix}{name} ")

    walk(build_parser(), "")
    return found


# A command line per writing command that writes when run (beyond ALWAYS_WRITE, which the early check covers).
WRITES_WHEN_RUN = {
    "suggestions": ["suggestions", "--accept", "1"],
    "ungrounded": ["ungrounded", "--accept", "1"],
    "prompts set": ["prompts", "set", "query/answer", "{prompt}"],
    "prompts reset": ["prompts", "reset", "query/answer"],
    "prompts import": ["prompts", "import", "{prompt_set}"],
    "prompts reextract": ["prompts", "reextract"],
}


def test_sync_is_turned_away_before_the_rest_of_docatlas_loads_and_links_nothing(held, tmp_path, fake_ollama,
                                                                                monkeypatch, capsys):
    ws, holder = held
    docs = write_corpus(tmp_path / "docs")
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import docatlas.cli\n"
             "code = docatlas.cli.main(['--data-dir', sys.argv[2], 'sync', sys.argv[3]])\n"
             "print(code, sorted(m for m in ('ollama', 'sqlite_utils', 'networkx') if m in sys.modules))\n")
    other = subprocess.run([sys.executable, "-c", probe, str(ROOT / "desktop"), str(ws), str(docs)],
                           capture_output=True, text=True, timeout=60)
    assert other.stdout.strip() == "1 []"  # refused at the lock file: no database opened, no model client
    assert other.stderr.strip() == busy_sentence(holder.pid)

    code, out, err = docatlas(capsys, "--data-dir", str(ws), "sync", "--list")  # a read: allowed while busy
    assert code == 0 and "No folder is linked" in out and err == ""
    holder.stdin.close()
    holder.wait(timeout=60)

    fake_ollama.responder = lightrag_responder
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    code, out, err = docatlas(capsys, "--data-dir", str(ws), "sync", str(docs))  # the same command, now free
    assert code == 0, err
    assert "Graph:" in out
    with Store(ws / "docatlas.sqlite") as store:
        assert len(store.documents()) == len(list(docs.iterdir()))


@pytest.mark.parametrize("name", sorted(WRITES_WHEN_RUN))
def test_every_other_writing_command_says_the_workspace_is_busy(held, tmp_path, capsys, name):
    ws, holder = held
    prompt = tmp_path / "answer.txt"
    prompt.write_text("Answer from {context} only.\n", encoding="utf-8")
    prompt_set = tmp_path / "set.json"
    code, out, err = docatlas(capsys, "--data-dir", str(ws), "prompts", "export", str(prompt_set))
    assert code == 0, err
    line = [a.format(prompt=prompt, prompt_set=prompt_set) for a in WRITES_WHEN_RUN[name]]
    code, out, err = docatlas(capsys, "--data-dir", str(ws), *line)
    assert code == 1
    assert err.strip() == busy_sentence(holder.pid)
    assert "Traceback" not in out + err


def test_every_command_that_writes_is_checked():
    """A new writing command must join ALWAYS_WRITE or the table above (and so be tested)."""
    assert writing_commands() - set(ALWAYS_WRITE) == set(WRITES_WHEN_RUN)


"""A host setting with a bad entry: the user's text is kept through every save, and the CLI names the entry."""

from __future__ import annotations

import json

from docatlas.core.base import paths
from docatlas.core.base.settings import DEFAULT_HOST, load_settings, save_settings
from helpers import docatlas

TYPED = "gpu1:11434*3, gpu2:11434*many"


def write(data: dict) -> None:
    path = paths.settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def saved() -> dict:
    return json.loads(paths.settings_path().read_text(encoding="utf-8"))


def test_a_save_that_did_not_touch_the_host_keeps_the_users_text():
    """The prompts tab's "use profile" saves every setting: the bad host goes back as the user wrote it."""
    write({"ollama": {"host": TYPED, "parallel": 3}})
    settings = load_settings(paths.settings_path())
    assert settings.ollama.host == DEFAULT_HOST  # this run uses the default meanwhile...
    assert settings.unusable_host is not None and settings.unusable_host.text == TYPED
    assert "gpu2:11434*many" in settings.unusable_host.sentence()

    save_settings(settings.with_overrides(extraction__profile="compact"), paths.settings_path())
    assert saved()["ollama"]["host"] == TYPED  # ...but the file keeps what the user typed
    assert saved()["extraction"]["profile"] == "compact" and saved()["ollama"]["parallel"] == 3


def test_a_host_changed_to_something_else_is_saved(monkeypatch):
    write({"ollama": {"host": TYPED}})
    settings = load_settings(paths.settings_path())
    save_settings(settings.with_overrides(ollama__host="gpu1:11434*3"), paths.settings_path())
    assert saved()["ollama"]["host"] == "gpu1:11434*3"

    write({"ollama": {"host": TYPED}})  # and with OLLAMA_HOST set, the file still keeps the user's text
    monkeypatch.setenv("OLLAMA_HOST", "10.9.9.9:1")
    settings = load_settings(paths.settings_path())
    assert settings.ollama.host == "10.9.9.9:1"
    save_settings(settings.with_overrides(ollama__parallel=4), paths.settings_path())
    assert saved()["ollama"]["host"] == TYPED and saved()["ollama"]["parallel"] == 4


def test_the_cli_names_the_bad_entry_in_one_line(capsys, tmp_path):
    write({"ollama": {"host": TYPED}})
    code, _, err = docatlas(capsys, "--data-dir", str(tmp_path / "ws"), "status")
    assert code == 0
    (note,) = [line for line in err.splitlines() if "host" in line]
    assert note.startswith("note: settings.json:") and "'gpu2:11434*many'" in note and DEFAULT_HOST in note
    assert saved()["ollama"]["host"] == TYPED  # a CLI run changes nothing in settings.json

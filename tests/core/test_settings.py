"""settings.json: every value checked on load, and nothing from the environment ever saved."""

from __future__ import annotations

import json

import pytest
from docatlas.core.base import paths
from docatlas.core.base.settings import Settings, load_settings, save_settings


def write(data: dict) -> None:
    path = paths.settings_path()
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_host_from_the_environment_is_never_saved(monkeypatch):
    """Load with OLLAMA_HOST set, change the profile as the window does, read the file."""
    write({"ollama": {"host": "192.168.1.5:11434", "parallel": 3}})
    monkeypatch.setenv("OLLAMA_HOST", "10.9.9.9:1")
    settings = load_settings(paths.settings_path())
    assert settings.ollama.host == "10.9.9.9:1"  # the environment wins while running

    # the prompts tab's "use profile" and the Ollama dialog's Save both go through save_settings
    save_settings(settings.with_overrides(extraction__profile="compact"), paths.settings_path())
    saved = json.loads(paths.settings_path().read_text(encoding="utf-8"))
    assert saved["ollama"]["host"] == "192.168.1.5:11434"
    assert saved["extraction"]["profile"] == "compact" and saved["ollama"]["parallel"] == 3
    assert "10.9.9.9" not in paths.settings_path().read_text(encoding="utf-8")


def test_a_fresh_install_with_the_environment_saves_the_default_host(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "10.9.9.9:1")
    settings = load_settings(paths.settings_path())
    save_settings(settings.with_overrides(ollama__parallel=4), paths.settings_path())
    saved = json.loads(paths.settings_path().read_text(encoding="utf-8"))
    assert saved["ollama"]["host"] == Settings().ollama.host and saved["ollama"]["parallel"] == 4


def test_a_host_the_user_typed_is_saved_even_with_the_environment_set(monkeypatch):
    write({"ollama": {"host": "192.168.1.5:11434"}})
    monkeypatch.setenv("OLLAMA_HOST", "10.9.9.9:1")
    settings = load_settings(paths.settings_path())
    save_settings(settings.with_overrides(ollama__host="192.168.1.7:11434"), paths.settings_path())
    saved = json.loads(paths.settings_path().read_text(encoding="utf-8"))
    assert saved["ollama"]["host"] == "192.168.1.7:11434"


@pytest.mark.parametrize(
    ("section", "key", "value", "sentence"),
    [
        ("ollama", "parallel", "4", 'settings.json: "parallel" must be a whole number from 1 to 16; using 2.'),
        ("ollama", "parallel", 40, 'settings.json: "parallel" must be a whole number from 1 to 16; using 2.'),
        ("ollama", "timeout_s", None, 'settings.json: "timeout_s" must be a number from 0.1 to 86400; using 300.'),
        ("chunking", "chunk_tokens", -5,
         'settings.json: "chunk_tokens" must be a whole number from 50 to 1000000; using 1200.'),
        ("chunking", "chunk_tokens", 1.5,
         'settings.json: "chunk_tokens" must be a whole number from 50 to 1000000; using 1200.'),
        ("extraction", "loop_check", "yes", 'settings.json: "loop_check" must be true or false; using false.'),
        ("extraction", "model", "", None),  # unknown in this section: ignored, no sentence
        ("ollama", "model", "", 'settings.json: "model" must be a non-empty text; using "qwen2.5:7b".'),
        ("extraction", "entity_types", "person",
         'settings.json: "entity_types" must be a list of names, e.g. ["person", "organization"]; '
         'using ["person", "organization", "location", "event", "concept", "technology"].'),
        ("query", "mode", "fast",
         'settings.json: "mode" must be one of "local", "global", "hybrid", "naive", "mix", "community"; '
         'using "mix".'),
    ],
)
def test_a_wrong_value_gets_one_sentence_and_the_default(section, key, value, sentence):
    write({section: {key: value}, "ollama": {"retries": 1} if section != "ollama" else {key: value, "retries": 1}})
    settings = load_settings(paths.settings_path())
    assert settings.ollama.retries == 1  # the right values next to it are kept
    assert list(settings.warnings) == ([sentence] if sentence else [])
    if section == "ollama":
        assert getattr(settings.ollama, key) == getattr(Settings().ollama, key)
    else:
        assert getattr(settings, section) == getattr(Settings(), section)


def test_good_values_load_with_their_types():
    write({"ollama": {"timeout_s": 30, "parallel": 4.0, "temperature": 0.5},
           "extraction": {"entity_types": ["person", " place "], "loop_check": True},
           "query": {"mode": "local", "min_similarity": 0}})
    settings = load_settings(paths.settings_path())
    assert settings.warnings == ()
    assert settings.ollama.timeout_s == 30.0 and isinstance(settings.ollama.timeout_s, float)
    assert settings.ollama.parallel == 4 and isinstance(settings.ollama.parallel, int)
    assert settings.extraction.entity_types == ("person", "place") and settings.extraction.loop_check is True
    assert settings.query.mode == "local" and settings.query.min_similarity == 0.0


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("{not json", "settings.json could not be read (it is not valid JSON); using the default settings."),
        ("[1, 2]", "settings.json does not hold an object of settings; using the default settings."),
        ('{"query": 3}', 'settings.json: "query" must be an object of settings; using the defaults for all of it.'),
    ],
)
def test_an_unusable_file_gives_the_defaults_and_says_so(text, sentence):
    paths.settings_path().write_text(text, encoding="utf-8")
    settings = load_settings(paths.settings_path())
    assert settings == Settings() and settings.warnings == (sentence,)


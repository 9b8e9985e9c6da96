"""What the command modules share: the user-mistake error, the write lock, the workspace's models."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from docatlas.core.base.errors import DocAtlasError
from docatlas.core.base.settings import Settings
from docatlas.core.storage.database import Store
from docatlas.core.storage.lock import WorkspaceBusy, workspace_writer


class UserError(DocAtlasError):
    """A mistake in what the user asked for."""


@contextmanager
def writing(args: argparse.Namespace, store: Store, what: str) -> Iterator[None]:
    """Hold the workspace's write lock for a whole command; with `--wait`, wait for another writer."""

    def say_waiting(busy: WorkspaceBusy) -> None:
        print(WorkspaceBusy(busy.holder, "waiting for it to finish").message, file=sys.stderr, flush=True)

    with ExitStack() as held:
        try:
            held.enter_context(workspace_writer(store, what, wait=getattr(args, "wait", False),
                                                on_wait=say_waiting))
        except WorkspaceBusy as busy:
            raise WorkspaceBusy(busy.holder, "wait for it to finish or run again with --wait") from None
        yield


CHAT_MODEL_KEY, EMBED_MODEL_KEY = "cli_chat_model", "cli_embed_model"  # what `ingest` last used


def remember_models(store: Store, settings: Settings) -> None:
    """Keep in the workspace which models built it, so later commands default to them."""
    store.set_meta(CHAT_MODEL_KEY, settings.ollama.model)
    if settings.ollama.embed_model:
        store.set_meta(EMBED_MODEL_KEY, settings.ollama.embed_model)


def workspace_models(args: argparse.Namespace, store: Store, settings: Settings) -> Settings:
    """Settings with `--model`/`--embed-model`, else the models the workspace was built with.

    The embedding model matters most: questions are compared with vectors of the same model.
    """
    chat = getattr(args, "model", None) or store.get_meta(CHAT_MODEL_KEY)
    embed = (getattr(args, "embed_model", None) or store.get_meta(EMBED_MODEL_KEY)
             or store.get_meta("embed_model"))  # the core records the model of the vectors
    return settings.with_overrides(ollama__model=chat or None, ollama__embed_model=embed or None)

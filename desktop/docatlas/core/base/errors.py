"""Errors that reach the user: each carries one sentence saying what happened and what to do."""


class DocAtlasError(Exception):
    """Base for errors whose message is meant for the user as it is."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class DocumentError(DocAtlasError):
    """A document could not be read (binary, encrypted, empty, unknown type...)."""


class LLMError(DocAtlasError):
    """The model could not answer; the message says what the user can do."""


class OllamaUnreachable(LLMError):
    """Ollama is not running or not reachable at the configured host."""


class OllamaTimeout(LLMError):
    """Ollama did not answer in time."""


class ModelNotFound(LLMError):
    """The requested model is not pulled on the Ollama host."""


class Cancelled(DocAtlasError):
    """The user stopped the work; nothing half-done was kept."""


class StoreError(DocAtlasError):
    """The database could not be read or written (full disk, locked, corrupted)."""

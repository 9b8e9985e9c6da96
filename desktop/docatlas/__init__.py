"""DocAtlas: offline knowledge graphs from private documents with a local Ollama model."""

__version__ = "0.1.0"

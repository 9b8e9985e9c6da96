"""Layer 1, the bottom: errors, the one Progress type, keys and records, settings, paths, tokens.

Imports nothing else from DocAtlas."""

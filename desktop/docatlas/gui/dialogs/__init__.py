"""Dialogs: Ollama set-up, and the native questions the window asks."""

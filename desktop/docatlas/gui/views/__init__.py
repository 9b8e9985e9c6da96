"""Widgets of the main window: documents, chat, passage viewer, status, placeholders."""

"""The thin PySide6 layer over docatlas.core."""

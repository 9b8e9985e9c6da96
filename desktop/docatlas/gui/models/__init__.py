"""Qt item models over workspace data."""

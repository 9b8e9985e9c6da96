"""Layer 6: the graph. Merge records into entities and relations (with the user's
aliases and edits), summaries, edits and undo, merge suggestions, layout, export."""

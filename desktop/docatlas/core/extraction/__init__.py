"""Entity and relation extraction: parse model replies, extract per chunk, merge into a graph."""

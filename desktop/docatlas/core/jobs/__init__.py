"""Layer 8, the top: the use cases (ingest, delete, rebuild, re-extract, ...), each a
generator of `Progress` that can be cancelled. The CLI and the window call only jobs and
the storage read models."""

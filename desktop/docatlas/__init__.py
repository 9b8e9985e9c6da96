"""DocAtlas: offline knowledge graphs from private documents with a local Ollama model."""

import os

# numpy's OpenBLAS starts one busy-waiting thread per core as it loads and spins them after
# each product: 0.1-0.25 s of CPU in every process that searches vectors, taken from the
# window's and the model calls' threads. DocAtlas's products are small. A user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"

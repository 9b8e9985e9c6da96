"""The real small model of ../shared/tools/real-ollama, started for a bench and stopped after it."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / ".." / "shared" / "tools" / "real-ollama"
HOME = Path(os.environ.get("REAL_OLLAMA_HOME", Path.home() / ".cache" / "docatlas-real-ollama"))


class RealServer:
    """`with RealServer() as real:` gives `real.host` and `real.model` (SmolLM2-135M on CPU)."""

    def __init__(self, model: str = "smollm2:135m", clamp_predict: int = 256):
        self.model = model
        self.clamp_predict = clamp_predict
        self.host = ""
        self._process: subprocess.Popen | None = None
        self._folder = tempfile.TemporaryDirectory()

    def __enter__(self) -> RealServer:
        python = subprocess.run([str(TOOL / "setup.sh")], capture_output=True, text=True,
                                check=True).stdout.strip().splitlines()[-1]
        port_file = Path(self._folder.name) / "real.port"
        self._process = subprocess.Popen(
            [python, str(TOOL / "server.py"), "--port-file", str(port_file), "--model-dir", str(HOME / "models"),
             "--clamp-predict", str(self.clamp_predict), "--no-prompt-cache", "--preload", self.model,
             "--log", str(Path(self._folder.name) / "real.jsonl")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not port_file.exists() or not port_file.read_text().strip():
            if self._process.poll() is not None:
                raise RuntimeError("the real-ollama server did not start; run its setup.sh to see why")
            time.sleep(0.2)
        self.host = f"127.0.0.1:{port_file.read_text().strip()}"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=30)
        self._folder.cleanup()

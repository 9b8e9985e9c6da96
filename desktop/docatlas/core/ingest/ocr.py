"""Offline OCR: page images to text with a confidence, with PP-OCRv6 on ONNX Runtime.

The two PaddleOCR models (PP-OCRv6 small detection and recognition, Apache-2.0) ship in
DocAtlas's resources (`resources/ocr/`, with their licence and provenance), so nothing is ever
looked for or downloaded; `ocr_steps` runs them with numpy and Pillow around (no OpenCV).
Nothing of a page is ever logged. ONNX Runtime's Linux wheels carry Microsoft's telemetry (a
device id and an event store under ~/.cache/Microsoft, queued for upload, made as soon as it is
imported): `ORT_DISABLE_TELEMETRY` is set before the import, so none is made or sent. The
models are loaded once per process, on first use, and calls are serialised (one page at a time;
ONNX Runtime already uses every core for one page).

`recognize(image)` returns an `OcrText`: the lines in reading order and the page's
confidence (the recogniser's score averaged over the characters it read).
"""

from __future__ import annotations

import importlib.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docatlas.core.base.errors import DocAtlasError, DocumentError
from docatlas.core.base.resources import resource_dir

ENGINE = "PP-OCRv6 (small) on ONNX Runtime"
# The model files in resources/ocr, by task; the recogniser carries its own character list.
MODELS = {"Det": "PP-OCRv6_det_small.onnx", "Rec": "PP-OCRv6_rec_small.onnx"}
MODEL_FOLDER = "ocr"
# A side longer than this is scaled down before OCR: the detector works at 2000 px at most,
# and a 20,000 px scan would only cost memory.
MAX_SIDE = 4000
# The page is cut to its ink (darker than INK_LEVEL of 255) with this share of its longest side
# around it: PP-OCRv6's detector finds nothing on a nearly blank page (one short line on white,
# tests/core/test_ocr.py), and finds it once the empty paper is cut away.
INK_LEVEL = 215
INK_MARGIN = 0.02
REINSTALL = "reinstall DocAtlas to read scanned pages and images."

_lock = threading.Lock()
_models: Any = None


@dataclass(frozen=True)
class OcrText:
    """What OCR read on one page: its text (lines in reading order) and mean confidence 0..1."""

    text: str
    confidence: float


def available() -> bool:
    """Whether OCR can run: ONNX Runtime is installed and the models are there; imports nothing."""
    try:
        return importlib.util.find_spec("onnxruntime") is not None and all(
            path.is_file() for path in model_paths().values())
    except DocumentError:
        return False


def model_paths() -> dict[str, Path]:
    """Each task's model file in DocAtlas's resources (Det, Rec)."""
    try:
        folder = resource_dir(MODEL_FOLDER)
    except DocAtlasError as exc:
        raise DocumentError(f"The OCR models are missing; {REINSTALL}") from exc
    return {task: folder / name for task, name in MODELS.items()}


def _get_models() -> Any:
    global _models
    if _models is None:
        os.environ["ORT_DISABLE_TELEMETRY"] = "1"  # read when onnxruntime is imported
        try:
            import onnxruntime

            from docatlas.core.ingest import ocr_steps
        except Exception as exc:  # a broken install: say so once, in a sentence
            raise DocumentError(f"The OCR engine (ONNX Runtime) could not be loaded; {REINSTALL}") from exc
        onnxruntime.disable_telemetry_events()
        paths = model_paths()
        missing = [path.name for path in paths.values() if not path.is_file()]
        if missing:
            raise DocumentError(f"The OCR models ({', '.join(missing)}) are missing; {REINSTALL}")
        try:
            _models = ocr_steps.load(paths["Det"], paths["Rec"])
        except Exception as exc:  # a damaged model file
            raise DocumentError(f"The OCR models could not be read; {REINSTALL}") from exc
    return _models


def recognize(image: Any) -> OcrText:
    """OCR one page image (a Pillow image); the text in reading order and its confidence."""
    from docatlas.core.ingest import ocr_steps

    image = _prepared(image)
    with _lock:
        lines = ocr_steps.read_page(_get_models(), image)
    return assemble(lines)


def _prepared(image: Any) -> Any:
    """The image as 8-bit RGB on white, scaled so its longest side is at most `MAX_SIDE`,
    and cut to its ink with a margin (a blank page stays as it is)."""
    from PIL import Image

    if image.mode in ("RGBA", "LA", "P", "PA"):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(background, rgba)
    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        image = image.point(lambda value: value / 256).convert("L")
    image = image.convert("RGB")
    longest = max(image.size)
    if longest > MAX_SIDE:
        scale = MAX_SIDE / longest
        image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))))
    return _inked(image)


def _inked(image: Any) -> Any:
    """`image` cut to the box around its ink, `INK_MARGIN` of its longest side around it."""
    ink = image.convert("L").point(lambda value: 255 if value < INK_LEVEL else 0).getbbox()
    if ink is None:
        return image
    margin = max(8, round(INK_MARGIN * max(image.size)))
    left, top, right, bottom = ink
    return image.crop((max(0, left - margin), max(0, top - margin), min(image.width, right + margin),
                       min(image.height, bottom + margin)))


def assemble(boxes: list) -> OcrText:
    """`[box, text, score]` items (`ocr_steps.read_page`) as lines in reading order and a confidence.

    Boxes whose vertical centres lie within half a box height of a line's join that line,
    left to right; lines go top to bottom."""
    items = []
    for box, text, score in boxes:
        text = " ".join(str(text).split())
        if not text:
            continue
        ys = [point[1] for point in box]
        xs = [point[0] for point in box]
        items.append(((min(ys) + max(ys)) / 2, max(ys) - min(ys), min(xs), text, float(score)))
    items.sort(key=lambda item: (item[0], item[2]))
    lines: list[list[tuple]] = []
    for item in items:
        if lines:
            line = lines[-1]
            centre = sum(i[0] for i in line) / len(line)
            height = max(i[1] for i in line)
            if abs(item[0] - centre) <= max(height, item[1]) / 2:
                line.append(item)
                continue
        lines.append([item])
    text = "\n".join(" ".join(i[3] for i in sorted(line, key=lambda i: i[2])) for line in lines)
    chars = sum(len(i[3]) for i in items)
    confidence = sum(len(i[3]) * i[4] for i in items) / chars if chars else 0.0
    return OcrText(text=text, confidence=round(confidence, 4))

"""Offline OCR: page images to text with a confidence, through RapidOCR (ONNX Runtime).

The engine is `rapidocr` 3.x on ONNX Runtime, with OpenCV's headless build (no GUI, no Qt of
its own). Its PP-OCRv6 detection and recognition models are inside the wheel, and the engine
is given their paths, so it never looks for (or downloads) another model. Its logger is
silenced: nothing reaches the terminal, and no line of a page is ever logged. ONNX Runtime's
Linux wheels carry Microsoft's telemetry (a device id and an event store under
~/.cache/Microsoft, queued for upload, made as soon as it is imported): `ORT_DISABLE_TELEMETRY`
is set before the import, so none is made or sent. It is loaded once
per process, on first use, and calls are serialised (one page at a time; ONNX Runtime already
uses every core for one page).

`recognize(image)` returns an `OcrText`: the lines in reading order and the page's
confidence (the recogniser's score averaged over the characters it read).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docatlas.core.base.errors import DocumentError

ENGINE = "rapidocr"
# The models the rapidocr wheel ships (rapidocr/models/), by task; packaging/bundle.py bundles them.
MODELS = {"Det": "PP-OCRv6_det_small.onnx", "Rec": "PP-OCRv6_rec_small.onnx"}
# A side longer than this is scaled down before OCR: the detector works at 2000 px at most,
# and a 20,000 px scan would only cost memory.
MAX_SIDE = 4000
# The page is cut to its ink (darker than INK_LEVEL of 255) with this share of its longest side
# around it: PP-OCRv6's detector finds nothing on a nearly blank page (one short line on white,
# tests/core/test_ocr.py), and finds it once the empty paper is cut away.
INK_LEVEL = 215
INK_MARGIN = 0.02

_lock = threading.Lock()
_engine: Any = None


@dataclass(frozen=True)
class OcrText:
    """What OCR read on one page: its text (lines in reading order) and mean confidence 0..1."""

    text: str
    confidence: float


def available() -> bool:
    """Whether the OCR engine is installed (it is a dependency, so normally yes); imports nothing."""
    return importlib.util.find_spec(ENGINE) is not None and importlib.util.find_spec("onnxruntime") is not None


def model_paths() -> dict[str, Path]:
    """Each task's model file inside the installed rapidocr package (Det, Rec)."""
    spec = importlib.util.find_spec(ENGINE)
    if spec is None or spec.origin is None:
        raise DocumentError("The OCR engine (rapidocr) is not installed; reinstall DocAtlas to read "
                            "scanned pages and images.")
    folder = Path(spec.origin).parent / "models"
    return {task: folder / name for task, name in MODELS.items()}


def engine_params() -> dict[str, Any]:
    """RapidOCR's settings: the packaged models by path (nothing to download), no per-line
    180-degree classifier, and no logging."""
    params: dict[str, Any] = {f"{task}.model_path": str(path) for task, path in model_paths().items()}
    # No per-line 180-degree classifier: on upright pages it turns some good lines upside
    # down and they are lost (bench/ocr.py: 3 of 12 lines dropped with it, none without).
    params.update({"Global.use_cls": False, "Global.log_level": "critical"})
    # The detector sees the page at its own size (at most 2000 px, RapidOCR's cap), never
    # enlarged: a page cut to one line of ink, enlarged to 736 px high, splits into stray boxes.
    params.update({"Det.limit_type": "max", "Det.limit_side_len": 2000})
    return params


def _silence(logger: logging.Logger) -> None:
    """RapidOCR's logger writes to the terminal with its own handler: give it none but a null one."""
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    logger.setLevel(logging.CRITICAL + 1)


def _get_engine() -> Any:
    global _engine
    if _engine is None:
        os.environ["ORT_DISABLE_TELEMETRY"] = "1"  # read when onnxruntime is imported, which rapidocr does
        try:
            import onnxruntime
            from rapidocr import RapidOCR
            from rapidocr.utils.log import logger
        except Exception as exc:  # a broken install: say so once, in a sentence
            raise DocumentError("The OCR engine (rapidocr) could not be loaded; reinstall "
                                "DocAtlas to read scanned pages and images.") from exc
        onnxruntime.disable_telemetry_events()
        _silence(logger)
        missing = [path.name for path in model_paths().values() if not path.is_file()]
        if missing:
            raise DocumentError(f"The OCR models ({', '.join(missing)}) are missing; reinstall DocAtlas to "
                                "read scanned pages and images.")
        _engine = RapidOCR(params=engine_params())
        _silence(logger)  # RapidOCR() sets the logger's level from its config
    return _engine


def recognize(image: Any) -> OcrText:
    """OCR one page image (a Pillow image); the text in reading order and its confidence."""
    image = _prepared(image)
    with _lock:
        result = _get_engine()(image)  # a Pillow image: RapidOCR turns its RGB into OpenCV's BGR
    if result.boxes is None or result.txts is None or result.scores is None:
        return assemble([])
    return assemble(list(zip(result.boxes.tolist(), result.txts, result.scores, strict=True)))


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
    """RapidOCR's `[box, text, score]` items as lines in reading order and a confidence.

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

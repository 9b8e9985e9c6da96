"""Offline OCR: page images to text with a confidence, through RapidOCR (ONNX Runtime).

The engine is `rapidocr_onnxruntime`: its detection and recognition models
(PP-OCRv4, about 16 MB) are inside the wheel, so nothing is downloaded at run time; it runs
on the CPU with ONNX Runtime. It is loaded once per process, on first use, and calls are
serialised (one page at a time; ONNX Runtime already uses every core for one page).

`recognize(image)` returns an `OcrText`: the lines in reading order and the page's
confidence (the recogniser's score averaged over the characters it read).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

from docatlas.core.base.errors import DocumentError

ENGINE = "rapidocr-onnxruntime"
# A side longer than this is scaled down before OCR: the detector works at 2000 px at most,
# and a 20,000 px scan would only cost memory.
MAX_SIDE = 4000

_CV2_SETS = ("QT_QPA_PLATFORM_PLUGIN_PATH", "QT_QPA_FONTDIR")  # opencv-python sets them on import
_lock = threading.Lock()
_engine: Any = None


@dataclass(frozen=True)
class OcrText:
    """What OCR read on one page: its text (lines in reading order) and mean confidence 0..1."""

    text: str
    confidence: float


def available() -> bool:
    """Whether the OCR engine can be imported (it is a dependency, so normally yes)."""
    try:
        import rapidocr_onnxruntime  # noqa: F401
    except Exception:
        return False
    return True


def _get_engine() -> Any:
    global _engine
    if _engine is None:
        saved = {name: os.environ.get(name) for name in _CV2_SETS}
        try:
            from rapidocr_onnxruntime import RapidOCR
        except Exception as exc:  # a broken install: say so once, in a sentence
            raise DocumentError("The OCR engine (rapidocr-onnxruntime) could not be loaded; reinstall "
                                "DocAtlas to read scanned pages and images.") from exc
        finally:
            _restore(saved)
        # No per-line 180-degree classifier: on upright pages it turns some good lines upside
        # down and they are lost (bench/ocr.py: 3 of 12 lines dropped with it, none without).
        _engine = RapidOCR(use_cls=False)
    return _engine


def _restore(saved: dict[str, str | None]) -> None:
    """Put back what importing OpenCV changed in the environment: opencv-python points Qt at its
    own Qt 5 plugins, which the window's child processes would inherit."""
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def recognize(image: Any) -> OcrText:
    """OCR one page image (a Pillow image); the text in reading order and its confidence."""
    import numpy as np

    image = _prepared(image)
    with _lock:
        result, _ = _get_engine()(np.asarray(image))
    return assemble(result or [])


def _prepared(image: Any) -> Any:
    """The image as 8-bit RGB on white, scaled so its longest side is at most `MAX_SIDE`."""
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
    return image


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

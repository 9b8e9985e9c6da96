"""The two steps of OCR, on ONNX Runtime with numpy and Pillow around the models: find the text
lines of a page (PP-OCRv6 detection, a map of how likely each pixel is text), then read each line
(PP-OCRv6 recognition, a CTC sequence over the characters the model carries in its metadata).

Detection: the page at most `DET_MAX_SIDE` px, each side a multiple of 32, normalised to -1..1 in
the models' blue-green-red order; pixels above `PIXEL_THRESHOLD` grown by one pixel right and
down; connected regions (8-neighbour runs joined row to row); each region's smallest rotated
rectangle, kept when its mean probability reaches `REGION_THRESHOLD`, grown by
area * `GROW_RATIO` / perimeter on every side (the model marks a shrunken core of each line).
Recognition: each line cut out upright, `REC_HEIGHT` px high, in batches of similar width padded
to the widest; a step's most likely class, repeats merged and blanks dropped; a line's score is
the mean probability of the characters kept, and a line below `LINE_THRESHOLD` is dropped.

Nothing here logs: a line's text only goes back to the caller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

DET_MAX_SIDE = 2000  # the detector's input is never larger, and never enlarged
PIXEL_THRESHOLD = 0.3  # a pixel is text above this probability
REGION_THRESHOLD = 0.5  # a region is a line when its pixels' mean probability reaches this
GROW_RATIO = 1.6  # how far a region's rectangle grows: area * ratio / perimeter on each side
MIN_SIDE = 3  # a rectangle thinner than this (detector pixels) is noise; after growing, MIN_SIDE + 2
PAD_RATIO = 8  # a page wider than this many times its height is padded to a quarter of its width
PAD_MIN_HEIGHT = 30
REC_HEIGHT = 48  # the recogniser's input height
REC_MIN_WIDTH = 320  # and its narrowest batch
REC_BATCH = 6
LINE_THRESHOLD = 0.5  # a line read with a lower mean probability is dropped


@dataclass(frozen=True)
class Models:
    """The two ONNX Runtime sessions and the recogniser's classes (0 is CTC's blank)."""

    detector: Any
    recogniser: Any
    classes: tuple[str, ...]


def load(detector: Path, recogniser: Path) -> Models:
    """Sessions for the two model files; the classes come from the recogniser's `character`
    metadata (one character a line), with the blank before them and a space after."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only: ONNX Runtime's warnings would reach the terminal
    options.enable_cpu_mem_arena = False  # every page has its own sizes: no arena kept at the largest
    sessions = [onnxruntime.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
                for path in (detector, recogniser)]
    characters = sessions[1].get_modelmeta().custom_metadata_map.get("character", "")
    classes = ("", *characters.split("\n"), " ")
    width = sessions[1].get_outputs()[0].shape[-1]
    if not characters or (isinstance(width, int) and width != len(classes)):
        raise ValueError(f"{recogniser.name} has no character list that matches its {width} classes")
    return Models(detector=sessions[0], recogniser=sessions[1], classes=classes)


def read_page(models: Models, image: Any) -> list[tuple[list[list[float]], str, float]]:
    """Every line found on `image` (8-bit RGB Pillow image): its corners (top left, top right,
    bottom right, bottom left, in `image` pixels), its text and its score 0..1."""
    page, top = _padded(image)
    boxes = detect(models, page)
    lines = recognise(models, [crop(page, box) for box in boxes])
    found = []
    for box, (text, score) in zip(boxes, lines, strict=True):
        if text.strip() and score >= LINE_THRESHOLD:
            corners = [[float(x), float(min(max(y - top, 0), image.height))] for x, y in box]
            found.append((corners, text, score))
    return found


def _padded(image: Any) -> tuple[Any, int]:
    """A page much wider than high (one line cut to its ink) with white bands above and below,
    so the detector sees paper around the line; and the height of the top band."""
    from PIL import Image

    if image.width / image.height <= PAD_RATIO and image.height > PAD_MIN_HEIGHT:
        return image, 0
    height = max(image.width // PAD_RATIO, PAD_MIN_HEIGHT) * 2
    top = max(0, (height - image.height) // 2)
    page = Image.new("RGB", (image.width, image.height + 2 * top), "white")
    page.paste(image, (0, top))
    return page, top


def _tensor(image: Any) -> np.ndarray:
    """An RGB Pillow image as the models' input: 1 x 3 x H x W, blue-green-red, -1..1."""
    pixels = np.asarray(image, dtype=np.float32)[:, :, ::-1]
    return np.ascontiguousarray(((pixels / 127.5) - 1.0).transpose(2, 0, 1)[np.newaxis])


def detect(models: Models, image: Any) -> list[np.ndarray]:
    """The text lines of `image`: each a 4 x 2 array of corners (top left, top right, bottom
    right, bottom left) in `image` pixels, in no particular order."""
    from PIL import Image

    scale = min(1.0, DET_MAX_SIDE / max(image.size))
    width, height = (max(32, round(side * scale / 32) * 32) for side in image.size)
    resized = image.resize((width, height), Image.Resampling.BILINEAR)
    (probability,) = models.detector.run(None, {models.detector.get_inputs()[0].name: _tensor(resized)})
    probability = probability[0, 0]
    mask = probability > PIXEL_THRESHOLD
    mask[1:, :] |= mask[:-1, :].copy()  # grown one pixel down and right, joining a line's letters
    mask[:, 1:] |= mask[:, :-1].copy()
    sx, sy = image.width / width, image.height / height
    boxes = []
    for points, score in regions(mask, probability):
        if score < REGION_THRESHOLD:
            continue
        rect = smallest_rectangle(points)
        if rect is None or min(rect[1]) < MIN_SIDE:
            continue
        centre, (w, h), axis = rect
        grow = w * h * GROW_RATIO / (2 * (w + h))
        w, h = w + 2 * grow, h + 2 * grow
        if min(w, h) < MIN_SIDE + 2:
            continue
        corners = _corners(centre, w, h, axis)
        corners = (corners + 0.5) * (sx, sy) - 0.5  # detector pixel centres to image pixel centres
        corners = np.clip(np.round(corners), 0, (image.width - 1, image.height - 1))
        if np.linalg.norm(corners[0] - corners[1]) <= 3 or np.linalg.norm(corners[0] - corners[3]) <= 3:
            continue
        boxes.append(corners)
    return boxes


def regions(mask: np.ndarray, probability: np.ndarray) -> list[tuple[np.ndarray, float]]:
    """The 8-connected regions of `mask`: for each, the pixel centres at the ends of its runs
    (x, y; enough for its convex hull) and the mean of `probability` over its pixels."""
    edges = np.diff(np.pad(mask, ((0, 0), (1, 1))).astype(np.int8), axis=1)
    rows, starts = np.nonzero(edges == 1)
    _, ends = np.nonzero(edges == -1)  # one past each run's last pixel, in the same order
    if not len(rows):
        return []
    parent = list(range(len(rows)))

    def root(run: int) -> int:
        while parent[run] != run:
            parent[run] = parent[parent[run]]
            run = parent[run]
        return run

    first = np.searchsorted(rows, np.arange(mask.shape[0] + 1))  # each row's first run
    for row in range(1, mask.shape[0]):
        above, here = range(first[row - 1], first[row]), range(first[row], first[row + 1])
        i = above.start
        for run in here:  # runs touch (8-neighbours) when each starts before the other ends + 1
            while i < above.stop and ends[i] < starts[run]:
                i += 1
            j = i
            while j < above.stop and starts[j] <= ends[run]:
                a, b = root(j), root(run)
                if a != b:
                    parent[b] = a
                j += 1
    labels = np.array([root(run) for run in range(len(rows))])
    _, labels = np.unique(labels, return_inverse=True)
    sums = np.pad(np.cumsum(probability, axis=1, dtype=np.float64), ((0, 0), (1, 0)))
    run_sum = sums[rows, ends] - sums[rows, starts]
    totals = np.bincount(labels, weights=run_sum)
    counts = np.bincount(labels, weights=ends - starts)
    ends_x = np.concatenate([starts, ends - 1])
    ys = np.concatenate([rows, rows])
    order = np.argsort(np.concatenate([labels, labels]), kind="stable")
    split = np.cumsum(np.bincount(labels, minlength=len(totals)) * 2)[:-1]
    points = np.split(np.stack([ends_x, ys], axis=1)[order].astype(np.float64), split)
    return [(p, float(t / c)) for p, t, c in zip(points, totals, counts, strict=True)]


def convex_hull(points: np.ndarray) -> np.ndarray:
    """The convex hull of 2-D points (Andrew's monotone chain), counter-clockwise, no repeats."""
    unique = np.unique(points, axis=0)
    if len(unique) < 3:
        return unique

    def half(ordered: np.ndarray) -> list:
        chain: list = []
        for point in ordered:
            while len(chain) >= 2 and _cross(chain[-2], chain[-1], point) <= 0:
                chain.pop()
            chain.append(point)
        return chain

    lower, upper = half(unique), half(unique[::-1])
    return np.array(lower[:-1] + upper[:-1])


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def smallest_rectangle(points: np.ndarray) -> tuple[np.ndarray, tuple[float, float], np.ndarray] | None:
    """The smallest-area rectangle around `points` (one of its sides lies on a hull edge):
    its centre, its (width, height) and the unit vector of its width, which points rightwards
    (within 45 degrees of the x axis). None for fewer than two distinct points."""
    hull = convex_hull(points)
    if len(hull) < 2:
        return None
    edges = np.roll(hull, -1, axis=0) - hull
    lengths = np.hypot(edges[:, 0], edges[:, 1])
    axes = edges[lengths > 0] / lengths[lengths > 0, np.newaxis]
    normals = np.stack([-axes[:, 1], axes[:, 0]], axis=1)
    along, across = hull @ axes.T, hull @ normals.T  # points x candidate sides
    widths = along.max(axis=0) - along.min(axis=0)
    heights = across.max(axis=0) - across.min(axis=0)
    best = int(np.argmin(widths * heights))
    axis, normal = axes[best], normals[best]
    centre = axis * (along[:, best].max() + along[:, best].min()) / 2 + \
        normal * (across[:, best].max() + across[:, best].min()) / 2
    width, height = float(widths[best]), float(heights[best])
    if abs(axis[0]) < abs(axis[1]):  # the other side is the one nearer the x axis
        axis, width, height = normal, height, width
    if axis[0] < 0:
        axis = -axis
    return centre, (width, height), axis


def _corners(centre: np.ndarray, width: float, height: float, axis: np.ndarray) -> np.ndarray:
    """Top left, top right, bottom right, bottom left of a rectangle (y grows downwards)."""
    down = np.array([-axis[1], axis[0]])  # the axis turned a quarter clockwise on screen
    half_w, half_h = axis * width / 2, down * height / 2
    return np.array([centre - half_w - half_h, centre + half_w - half_h, centre + half_w + half_h,
                     centre - half_w + half_h])


def crop(image: Any, box: np.ndarray) -> Any:
    """The line inside `box` (corners as `detect` gives them), cut out and turned upright;
    a line much taller than wide is vertical text and is turned a quarter to lie flat."""
    from PIL import Image

    top_left, top_right, bottom_right, bottom_left = box
    width = int(max(np.linalg.norm(top_left - top_right), np.linalg.norm(bottom_left - bottom_right)))
    height = int(max(np.linalg.norm(top_left - bottom_left), np.linalg.norm(top_right - bottom_right)))
    quad = (*top_left, *bottom_left, *bottom_right, *top_right)
    line = image.transform((max(1, width), max(1, height)), Image.Transform.QUAD, [float(v) for v in quad],
                           resample=Image.Resampling.BICUBIC, fillcolor="white")
    if line.height >= 1.5 * line.width:
        line = line.transpose(Image.Transpose.ROTATE_90)
    return line


def recognise(models: Models, lines: list[Any]) -> list[tuple[str, float]]:
    """Each line image's text and score, in the order given."""
    from PIL import Image

    ratios = [line.width / line.height for line in lines]
    read: list[tuple[str, float]] = [("", 0.0)] * len(lines)
    order = sorted(range(len(lines)), key=ratios.__getitem__)
    name = models.recogniser.get_inputs()[0].name
    for start in range(0, len(order), REC_BATCH):
        batch = order[start:start + REC_BATCH]
        width = int(REC_HEIGHT * max(REC_MIN_WIDTH / REC_HEIGHT, *(ratios[i] for i in batch)))
        tensor = np.zeros((len(batch), 3, REC_HEIGHT, width), dtype=np.float32)  # padding: 0, mid grey
        for slot, index in enumerate(batch):
            fitted = min(width, math.ceil(REC_HEIGHT * ratios[index]))
            resized = lines[index].resize((fitted, REC_HEIGHT), Image.Resampling.BILINEAR)
            tensor[slot, :, :, :fitted] = _tensor(resized)[0]
        (scores,) = models.recogniser.run(None, {name: tensor})
        for slot, index in enumerate(batch):
            read[index] = decode(scores[slot], models.classes)
    return read


def decode(scores: np.ndarray, classes: tuple[str, ...]) -> tuple[str, float]:
    """CTC greedy decoding of one line (steps x classes probabilities): the most likely class
    at each step, repeats merged, blanks (class 0) dropped; the mean probability of what is kept."""
    best = scores.argmax(axis=1)
    keep = best != 0
    keep[1:] &= best[1:] != best[:-1]
    if not keep.any():
        return "", 0.0
    text = "".join(classes[i] for i in best[keep])
    return text, float(scores.max(axis=1)[keep].mean())

"""Make resources/ocr/*.onnx from the PP-OCRv6 models of a rapidocr wheel, their weights stored
as float16: half the size (30 MB to 15 MB in every installer), the same computation.

Each float32 weight tensor of more than `SMALLEST` numbers is stored as float16 and turned back
into float32 by a Cast node at the start of the graph; ONNX Runtime folds those Casts when it
loads the model, so it computes in float32 as before, on weights rounded to float16 (a relative
error below 1/2048; a weight below 6e-8 becomes 0). A tensor that float16 cannot hold (a value
beyond 65504) stays float32. The recogniser's character list and every other
metadata entry are kept. bench/ocr.py measures the result against the originals.

    python packaging/ocr_models.py SOURCE_FOLDER     # e.g. .../site-packages/rapidocr/models

Needs the `onnx` package (not a DocAtlas dependency: run it in a virtualenv of its own with
`pip install onnx`). It writes the two files and prints their sizes and SHA-256.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "resources" / "ocr"
MODELS = ("PP-OCRv6_det_small.onnx", "PP-OCRv6_rec_small.onnx")
SMALLEST = 256  # smaller tensors (biases, scales) stay float32: nothing to gain
NOTE = ("weights stored as float16 by DocAtlas (packaging/ocr_models.py) and cast back to float32 on load; "
        "otherwise unchanged from the RapidOCR conversion of the PaddleOCR model (Apache-2.0)")


def halve(source: Path, target: Path) -> tuple[int, int]:
    """Write `source` with its large float32 weights stored as float16; (tensors halved, kept)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    kept, halved, casts, initializers = 0, 0, [], []
    for tensor in graph.initializer:
        values = numpy_helper.to_array(tensor)
        if tensor.data_type != TensorProto.FLOAT or values.size < SMALLEST:
            initializers.append(tensor)
            continue
        small = values.astype(np.float16)
        if not np.isfinite(small).all():
            initializers.append(tensor)
            kept += 1
            continue
        stored = numpy_helper.from_array(small, name=f"{tensor.name}__float16")
        initializers.append(stored)
        casts.append(helper.make_node("Cast", [stored.name], [tensor.name], to=TensorProto.FLOAT,
                                      name=f"{tensor.name}__to_float32"))
        halved += 1
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(casts + nodes)
    entries = {entry.key: entry.value for entry in model.metadata_props}
    entries["docatlas_note"] = NOTE
    del model.metadata_props[:]
    for key, value in entries.items():
        model.metadata_props.add(key=key, value=value)
    onnx.checker.check_model(model)
    onnx.save(model, str(target))
    return halved, kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="the folder holding the rapidocr wheel's two models")
    args = parser.parse_args(argv)
    try:
        import onnx  # noqa: F401
    except ImportError:
        sys.exit("ocr_models.py needs the onnx package: pip install onnx (in a virtualenv of its own)")
    TARGET.mkdir(parents=True, exist_ok=True)
    for name in MODELS:
        source, target = args.source / name, TARGET / name
        if not source.is_file():
            sys.exit(f"{source} is missing: pass the folder of the rapidocr wheel's models")
        halved, kept = halve(source, target)
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        print(f"{name}: {source.stat().st_size / 2**20:.1f} MB -> {target.stat().st_size / 2**20:.1f} MB, "
              f"{halved} tensors float16, {kept} kept float32; sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

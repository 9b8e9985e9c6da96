"""Ruled tables on a PDF page, from the lines pdfium says the page draws.

Every straight horizontal or vertical piece of a drawn path (a stroked line, a side of a
rectangle, a thin filled bar as Word draws a border) is an edge, in page coordinates. Edges
that cross or touch form a grid; a grid of two or more rows and columns is a table, its
distinct vertical positions the column borders and horizontal ones the row borders, and each
of pdfium's text runs belongs to the cell its centre falls in (a merged cell's text goes to
the cell where it stands, the others stay empty). All of it is pdfium's own calls, in C, so a
page costs a few milliseconds; pdfplumber's finder, which parses the page again in Python
with pdfminer, took about half a second a page here.
"""

from __future__ import annotations

import ctypes

from docatlas.core.ingest.pdf_tables import Box, FoundTable, clean

MIN_EDGE = 8.0  # points: a shorter straight piece is a tick or a glyph, not a border
STRAIGHT = 1.0  # points of slant still counted as horizontal or vertical
TOUCH = 2.5  # points: edges this close meet; borders this close are one
Edge = tuple[float, float, float]  # horizontal: (y, x0, x1); vertical: (x, y0, y1)


def _edges(page) -> tuple[list[Edge], list[Edge]]:
    import pypdfium2.raw as pdfium_c

    across: list[Edge] = []
    down: list[Edge] = []
    matrix = pdfium_c.FS_MATRIX()
    x, y = ctypes.c_float(), ctypes.c_float()
    for index in range(pdfium_c.FPDFPage_CountObjects(page.raw)):
        item = pdfium_c.FPDFPage_GetObject(page.raw, index)
        if pdfium_c.FPDFPageObj_GetType(item) != pdfium_c.FPDF_PAGEOBJ_PATH:
            continue
        if not pdfium_c.FPDFPageObj_GetMatrix(item, matrix):
            continue
        a, b, c, d, e, f = matrix.a, matrix.b, matrix.c, matrix.d, matrix.e, matrix.f
        start = last = None
        for number in range(pdfium_c.FPDFPath_CountSegments(item)):
            segment = pdfium_c.FPDFPath_GetPathSegment(item, number)
            if not pdfium_c.FPDFPathSegment_GetPoint(segment, x, y):
                continue
            point = (a * x.value + c * y.value + e, b * x.value + d * y.value + f)
            kind = pdfium_c.FPDFPathSegment_GetType(segment)
            if kind == pdfium_c.FPDF_SEGMENT_MOVETO:
                start = last = point
                continue
            if kind == pdfium_c.FPDF_SEGMENT_LINETO and last is not None:
                _add(across, down, last, point)
            last = point
            if pdfium_c.FPDFPathSegment_GetClose(segment) and start is not None:
                _add(across, down, last, start)
                last = start
    return across, down


def _add(across: list[Edge], down: list[Edge], one: tuple[float, float], two: tuple[float, float]) -> None:
    (x0, y0), (x1, y1) = one, two
    if abs(y1 - y0) <= STRAIGHT and abs(x1 - x0) >= MIN_EDGE:
        across.append(((y0 + y1) / 2, min(x0, x1), max(x0, x1)))
    elif abs(x1 - x0) <= STRAIGHT and abs(y1 - y0) >= MIN_EDGE:
        down.append(((x0 + x1) / 2, min(y0, y1), max(y0, y1)))


def _meets(h: Edge, v: Edge) -> bool:
    return h[1] - TOUCH <= v[0] <= h[2] + TOUCH and v[1] - TOUCH <= h[0] <= v[2] + TOUCH


def _grids(across: list[Edge], down: list[Edge]) -> list[tuple[list[Edge], list[Edge]]]:
    """Edges that meet, gathered into grids (union-find over horizontal-vertical crossings)."""
    parent = list(range(len(across) + len(down)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, h in enumerate(across):
        for j, v in enumerate(down):
            if _meets(h, v):
                parent[root(i)] = root(len(across) + j)
    groups: dict[int, tuple[list[Edge], list[Edge]]] = {}
    for i, h in enumerate(across):
        groups.setdefault(root(i), ([], []))[0].append(h)
    for j, v in enumerate(down):
        groups.setdefault(root(len(across) + j), ([], []))[1].append(v)
    return [group for group in groups.values() if len(group[0]) >= 2 and len(group[1]) >= 2]


def _borders(values: list[float]) -> list[float]:
    borders: list[float] = []
    for value in sorted(values):
        if not borders or value - borders[-1] > TOUCH:
            borders.append(value)
    return borders


def ruled_tables(page, textpage) -> list[FoundTable]:
    """The page's ruled tables of two rows and two columns at least, their cells' text."""
    across, down = _edges(page)
    if len(across) < 2 or len(down) < 2:
        return []
    runs = [textpage.get_rect(index) for index in range(textpage.count_rects())]
    found = []
    for horizontal, vertical in _grids(across, down):
        columns = _borders([v[0] for v in vertical])
        rows = _borders([h[0] for h in horizontal])[::-1]  # top to bottom
        if len(columns) < 3 or len(rows) < 3:
            continue
        box: Box = (columns[0], rows[-1], columns[-1], rows[0])
        cells = [[[] for _ in columns[1:]] for _ in rows[1:]]
        for run in runs:
            cx, cy = (run[0] + run[2]) / 2, (run[1] + run[3]) / 2
            if not (box[0] <= cx <= box[2] and box[1] <= cy <= box[3]):
                continue
            row = next(r for r in range(len(rows) - 1) if cy >= rows[r + 1] or r == len(rows) - 2)
            column = next(k for k in range(len(columns) - 1) if cx <= columns[k + 1] or k == len(columns) - 2)
            cells[row][column].append(run)
        table = []
        for row_cells in cells:
            texts = [clean(" ".join(textpage.get_text_bounded(*run)
                                    for run in sorted(parts, key=lambda r: (-r[3], r[0]))))
                     for parts in row_cells]
            if any(texts):
                table.append(texts)
        if len(table) >= 2 and max(sum(1 for cell in row if cell) for row in table) >= 2:
            found.append(FoundTable(box, table))
    return found

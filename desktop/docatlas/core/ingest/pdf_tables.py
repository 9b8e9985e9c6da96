"""Tables on a PDF page, read as header-labelled rows ("Name: Acme; Revenue: 12.").

Two kinds are found, both on what pdfium (in C) says of the page, so a page costs a few
milliseconds:

- ruled tables (cell borders drawn as lines or rectangles): `pdf_rules`;
- text-aligned tables (no lines): runs of at least `MIN_ROWS` lines that each break into two
  or more segments separated by a gap wider than the text is tall, whose segments fall into
  the same two or more columns, with short cells (prose in two page columns has long ones).

`page_with_tables` gives the page's text with each table replaced by its rows in the place
where its first character stood (content order); `pdf_layer` calls it only for a page with a
table, so every other page keeps pypdf's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docatlas.core.ingest.sheets import table_text

Box = tuple[float, float, float, float]  # left, bottom, right, top in PDF points (origin at the bottom)
MIN_ROWS = 3  # a text-aligned table: a header and two rows at least
COLUMN_GAP = 1.0  # a gap of at least this many text heights separates two cells
MAX_PITCH = 3.0  # lines of one table are at most this many text heights apart
MAX_CELL_WORDS = 5.0  # the mean words of a cell; above, it is prose in columns, not a table
_NUMBER = re.compile(r"[\d.,\-–ivxlc ]+")  # digits or roman numerals, as page numbers are
SHORT_LINE = 80  # text before a table (a running head) or after it (a page number) up to this long


@dataclass
class FoundTable:
    """A table's place on the page and its rows of cell texts (the first row is its header)."""

    box: Box
    rows: list[list[str]]


@dataclass
class TablePage:
    """A page's text with its tables as rows; whether a table closes the page, and its header."""

    text: str
    ends_with_table: bool
    last_header: list[str]


def clean(value: object) -> str:
    """A cell's text on one line (whitespace collapsed); "" for nothing."""
    return " ".join(str(value).split()) if value is not None else ""


def _inside(x: float, y: float, box: Box, margin: float = 1.0) -> bool:
    return box[0] - margin <= x <= box[2] + margin and box[1] - margin <= y <= box[3] + margin


Segment = tuple[Box, list[Box]]  # a cell's box and the text runs (pdfium rectangles) in it


def _runs(textpage, skip: list[Box]) -> list[Box]:
    boxes = []
    for index in range(textpage.count_rects()):
        box = textpage.get_rect(index)
        if not any(_inside((box[0] + box[2]) / 2, (box[1] + box[3]) / 2, table) for table in skip):
            boxes.append(box)
    return boxes


def _lines(runs: list[Box]) -> list[list[Segment]]:
    """Text runs grouped into lines (top to bottom), each line's segments left to right, a
    segment being the runs closer than `COLUMN_GAP` text heights. Geometry only: reading a
    run's text costs pdfium a pass over the page's characters, so only table candidates do."""
    lines: list[list[Box]] = []
    for box in sorted(runs, key=lambda run: (-(run[1] + run[3]) / 2, run[0])):
        if lines:
            last = lines[-1]
            centre = sum((b[1] + b[3]) / 2 for b in last) / len(last)
            if abs((box[1] + box[3]) / 2 - centre) <= max(b[3] - b[1] for b in (*last, box)) / 2:
                last.append(box)
                continue
        lines.append([box])
    merged_lines = []
    for line in lines:
        line.sort()
        height = max(b[3] - b[1] for b in line) or 1.0
        segments: list[Segment] = [(line[0], [line[0]])]
        for box in line[1:]:
            (left, bottom, right, top), parts = segments[-1]
            if box[0] - right < COLUMN_GAP * height:
                segments[-1] = ((left, min(bottom, box[1]), max(right, box[2]), max(top, box[3])), [*parts, box])
            else:
                segments.append((box, [box]))
        merged_lines.append(segments)
    return merged_lines


def _height(line: list[Segment]) -> float:
    return max(b[3] - b[1] for b, _ in line) or 1.0


def _centre(line: list[Segment]) -> float:
    return sum((b[1] + b[3]) / 2 for b, _ in line) / len(line)


def _as_table(textpage, lines: list[list[Segment]]) -> FoundTable | None:
    columns: list[list[float]] = []
    for left, right in sorted((b[0], b[2]) for line in lines for b, _ in line):
        if columns and left <= columns[-1][1] + 1.0:
            columns[-1][1] = max(columns[-1][1], right)
        else:
            columns.append([left, right])
    if len(columns) < 2:
        return None
    rows = []
    for line in lines:
        cells = [""] * len(columns)
        for box, parts in line:
            column = next(i for i, (left, right) in enumerate(columns) if left <= box[0] <= right)
            text = " ".join(clean(textpage.get_text_bounded(*part)) for part in parts)
            cells[column] = clean(f"{cells[column]} {text}")
        rows.append(cells)
    filled = [cell for row in rows for cell in row if cell]
    if sum(1 for cell in rows[0] if cell) < 2 or len(filled) < 0.5 * len(rows) * len(columns):
        return None
    if sum(len(cell.split()) for cell in filled) / len(filled) > MAX_CELL_WORDS:
        return None
    if len(columns) == 2 and sum(1 for row in rows if row[0].endswith(":")) >= 0.8 * len(rows):
        return None  # "Name: value" lines: a form, already readable as it is
    if len(columns) == 2 and all(_NUMBER.fullmatch(row[1]) for row in rows):
        return None  # a contents page or an index: no header row, a page number a line
    boxes = [b for line in lines for b, _ in line]
    box = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))
    return FoundTable(box, rows)


def aligned_tables(textpage, skip: list[Box], carried_columns: int = 0) -> list[FoundTable]:
    """Tables without lines: consecutive lines of two or more columns of short cells.

    `carried_columns` is the width of a table that ended the previous page: the page's first
    run of lines may then be as short as two rows when it has as many columns."""
    found: list[FoundTable] = []
    run: list[list[Segment]] = []
    first = True
    for line in [*_lines(_runs(textpage, skip)), []]:
        close = run and line and _centre(run[-1]) - _centre(line) <= MAX_PITCH * max(_height(run[-1]), _height(line))
        if len(line) >= 2 and (not run or close):
            run.append(line)
            continue
        shortest = 2 if first and carried_columns else MIN_ROWS
        if len(run) >= shortest and (table := _as_table(textpage, run)) is not None:
            if len(run) >= MIN_ROWS or len(table.rows[0]) == carried_columns:
                found.append(table)
        first = first and not run
        run = [line] if len(line) >= 2 else []
    return found


def _pieces(textpage, tables: list[FoundTable]) -> list[tuple[int, str]]:
    """The page's characters in content order cut into runs: (-1, text) outside any table,
    (k, "") once where table k's first character stands."""
    import ctypes

    import pypdfium2.raw as pdfium_c

    boxes = [(box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1) for box in (table.box for table in tables)]
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    get_box, raw = pdfium_c.FPDFText_GetCharBox, textpage.raw  # pdfium's own call: a page has thousands
    labels: list[int] = []
    label = -1
    for index in range(textpage.count_chars()):
        if get_box(raw, index, left, right, bottom, top) and (right.value > left.value or top.value > bottom.value):
            x, y = (left.value + right.value) / 2, (bottom.value + top.value) / 2
            label = -1
            for k, (x0, y0, x1, y1) in enumerate(boxes):
                if x0 <= x <= x1 and y0 <= y <= y1:
                    label = k
                    break
        labels.append(label)  # generated spaces and line breaks have no box: they go with the last
    pieces: list[tuple[int, str]] = []
    start = 0
    for index in range(1, len(labels) + 1):
        if index == len(labels) or labels[index] != labels[start]:
            if labels[start] < 0:
                pieces.append((-1, textpage.get_text_range(start, index - start)))
            elif all(k != labels[start] for k, _ in pieces):
                pieces.append((labels[start], ""))
            start = index
    return pieces


def page_with_tables(textpage, tables: list[FoundTable], carried_header: list[str] | None) -> TablePage:
    """The page's text in content order with each table as its rows.

    `carried_header` is the header of a table that ended the previous page: a table that opens
    this page with as many columns and a different first row continues it, so its first row
    is data, labelled by that header (a repeated header is read as the header, as usual)."""
    pieces = _pieces(textpage, tables)
    at = [i for i, (k, _) in enumerate(pieces) if k >= 0]
    before = "".join(text for _, text in pieces[:at[0]]) if at else ""
    after = "".join(text for _, text in pieces[at[-1] + 1:]) if at else ""
    opens = bool(at) and len(before.strip()) <= SHORT_LINE
    out, header = [], []
    for position, (k, text) in enumerate(pieces):
        if k < 0:
            out.append(text)
            continue
        rows = tables[k].rows
        continues = (position == at[0] and opens and carried_header is not None
                     and len(carried_header) == len(rows[0]) and rows[0] != carried_header)
        rows = [carried_header, *rows] if continues else rows
        header = rows[0]
        out.append("\n\n" + table_text(rows) + "\n\n")
    text = "".join(out).replace("\r\n", "\n").replace("\r", "\n")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return TablePage(text.strip(), bool(at) and len(after.strip()) <= SHORT_LINE, header)

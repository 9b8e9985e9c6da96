"""Spreadsheets to text: .xlsx (each sheet a page) and .csv, one sentence a row.

A row reads as a sentence of its header-labelled cells ("Name: Ada; City: Paris."), so a
model sees which value belongs to which column. Rows are read as a stream (openpyxl's
read-only mode, the csv module over a decoded stream); a sheet of more than `MAX_ROWS`
rows is sampled evenly (rows spread through it) and the document carries a warning saying how much was kept.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from docatlas.core.base.errors import DocumentError
from docatlas.core.base.paths import shown_name
from docatlas.core.ingest.archive_guard import check_archive
from docatlas.core.ingest.decoding import choose_encoding
from docatlas.core.ingest.loaded import Loaded, damaged, iso_date, refuse_ole

MAX_ROWS = 20_000  # rows kept per sheet; beyond that, every k-th row
MAX_CELL_CHARS = 2_000


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return " ".join(iso_date(value).split())[:MAX_CELL_CHARS]


def row_sentence(headers: list[str], cells: list[str]) -> str:
    """One row as "Header: value; ..." (a column without a header is "column N")."""
    parts = []
    for index, value in enumerate(cells):
        if value:
            label = headers[index] if index < len(headers) and headers[index] else f"column {index + 1}"
            parts.append(f"{label}: {value}")
    return "; ".join(parts) + "." if parts else ""


def table_text(rows: list[list[str]]) -> str:
    """A table's rows as sentences labelled by its first row; a one-row table as "a | b"."""
    if len(rows) < 2:
        return "\n".join(" | ".join(cell for cell in row if cell) for row in rows)
    return "\n".join(line for cells in rows[1:] if (line := row_sentence(rows[0], cells)))


def _sheet_text(rows: Iterator[list[str]]) -> tuple[str, int, int]:
    """The sentences of a sheet's rows; (text, rows kept, rows in the sheet).

    Past `MAX_ROWS`, every other kept row is dropped and the stride doubles, so the rows
    kept stay spread evenly through the sheet without knowing its length in advance and
    never more than `MAX_ROWS` sentences are held."""
    headers: list[str] = []
    for first in rows:
        if any(first):
            headers = first
            break
    lines: list[str] = []
    stride, seen = 1, 0
    for position, cells in enumerate(rows):
        seen += 1
        if position % stride == 0 and (line := row_sentence(headers, cells)):
            lines.append(line)
            if len(lines) > MAX_ROWS:
                lines, stride = lines[::2], stride * 2
    if not lines and headers:  # a sheet of one row: its cells are the content
        lines.append(row_sentence([], headers))
    return "\n".join(lines), len(lines), seen


def _sampled(path: Path, sheet: str, kept: int, seen: int) -> str:
    return (f"{shown_name(path)}: {sheet} has {seen:,} rows, more than the {MAX_ROWS:,} DocAtlas reads "
            f"of a sheet, so {kept:,} rows spread evenly through it were kept; split the sheet to "
            "read every row.")


def load_xlsx(path: Path) -> Loaded:
    """Each sheet as a page of row sentences, with the workbook's author, title and dates."""
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    refuse_ole(path, "Excel", ".xlsx")
    check_archive(path, "Excel workbook")
    loaded = Loaded()
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (InvalidFileException, KeyError, ValueError, OSError, EOFError) as exc:
        if isinstance(exc, OSError) and not isinstance(exc, EOFError):
            raise
        raise damaged(path, "Excel workbook", ".xlsx") from exc
    except Exception as exc:  # zip and XML errors of a damaged workbook come in many types
        raise damaged(path, "Excel workbook", ".xlsx") from exc
    try:
        props = book.properties
        loaded.title = props.title or ""
        loaded.meta("author", props.creator)
        loaded.meta("title", props.title)
        loaded.meta("created", iso_date(props.created))
        loaded.meta("modified", iso_date(props.modified))
        for number, sheet in enumerate(book.worksheets, start=1):
            rows = ([_cell(v) for v in row] for row in sheet.iter_rows(values_only=True))
            text, kept, seen = _sheet_text(rows)
            if seen > MAX_ROWS:
                loaded.warnings.append(_sampled(path, f"sheet {sheet.title!r}", kept, seen))
            if text:
                loaded.pages.append((number, f"Sheet {sheet.title}\n{text}"))
    except OSError:
        raise
    except Exception as exc:
        raise damaged(path, "Excel workbook", ".xlsx") from exc
    finally:
        book.close()
    return loaded


def _csv_rows(path: Path) -> Iterator[list[str]]:
    encoding = choose_encoding(path)
    with open(path, "rb") as raw:
        text = io.TextIOWrapper(raw, encoding=encoding.codec, errors="replace", newline="")
        sample = text.read(65536)
        try:
            dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
        except csv.Error:
            dialect = csv.excel
        text.seek(0)
        reader = csv.reader(text, dialect)
        try:
            for row in reader:
                yield [_cell(v.lstrip("\ufeff")) for v in row]
        except csv.Error as exc:
            raise damaged(path, "CSV file", ".csv") from exc


def load_csv(path: Path) -> Loaded:
    """The file's rows as sentences labelled by its header row (one page)."""
    loaded = Loaded()
    text, kept, seen = _sheet_text(_csv_rows(path))
    if seen > MAX_ROWS:
        loaded.warnings.append(_sampled(path, "the file", kept, seen))
    if "\x00" in text:
        raise DocumentError(f"{shown_name(path)} does not look like a CSV file; save it again as CSV "
                            "text and add it again.")
    loaded.pages.append((None, text))
    return loaded


"""OCR's confidence per page (`scan_pages`): written when a scanned document is stored,
read by `status` and the Documents tab. A document's rows go with it (ON DELETE CASCADE)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from docatlas.core.storage.database import Store


@dataclass(frozen=True)
class ScanSummary:
    """A document's OCR'd pages: how many, their mean confidence, and the least sure page."""

    pages: int
    mean_confidence: float
    lowest_page: int | None
    lowest_confidence: float

    def sentence(self) -> str:
        """One line for people: "OCR: 3 pages, confidence 0.96 (lowest 0.81 on page 2)"."""
        where = f" on page {self.lowest_page}" if self.lowest_page is not None else ""
        unit = "page" if self.pages == 1 else "pages"
        lowest = f" (lowest {self.lowest_confidence:.2f}{where})" if self.pages > 1 else ""
        return f"OCR: {self.pages} {unit}, confidence {self.mean_confidence:.2f}{lowest}"


def put(store: Store, document_id: int, pages: Iterable[tuple[int | None, float]]) -> None:
    """Replace the document's per-page OCR confidences."""
    rows = [(document_id, page, float(confidence)) for page, confidence in pages]
    with store.transaction() as conn:
        conn.execute("DELETE FROM scan_pages WHERE document_id = ?", (document_id,))
        conn.executemany("INSERT INTO scan_pages(document_id, page, confidence) VALUES (?, ?, ?)", rows)


def pages(store: Store, document_id: int) -> list[tuple[int | None, float]]:
    """(page, confidence) of each OCR'd page of a document, in page order."""
    rows = store.query("SELECT page, confidence FROM scan_pages WHERE document_id = ? ORDER BY page",
                       (document_id,))
    return [(row["page"], row["confidence"]) for row in rows]


def summaries(store: Store, document_ids: Sequence[int]) -> dict[int, ScanSummary]:
    """The OCR summary of each given document that has OCR'd pages."""
    found: dict[int, ScanSummary] = {}
    ids = [int(i) for i in document_ids]
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        rows = store.query("SELECT document_id, page, confidence FROM scan_pages WHERE document_id IN "
                           f"({','.join('?' * len(part))}) ORDER BY document_id, page", part)
        grouped: dict[int, list] = {}
        for row in rows:
            grouped.setdefault(row["document_id"], []).append((row["page"], row["confidence"]))
        for document_id, items in grouped.items():
            page, lowest = min(items, key=lambda item: item[1])
            found[document_id] = ScanSummary(len(items), sum(c for _, c in items) / len(items), page, lowest)
    return found

"""Layer 5: from files to records. Loaders (txt, md, html, pdf, docx), chunking, the
per-chunk extraction call, and the pure parse and repair of its reply."""

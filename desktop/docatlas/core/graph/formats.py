"""The names of the export formats, apart from `export` so that the CLI's grammar loads no graph code."""

EXPORT_FORMATS = ("json", "graphml", "gexf", "csv")

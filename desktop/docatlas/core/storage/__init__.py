"""Layer 2: the only place that speaks SQL. The workspace file (WAL, transactions, the
workspace lock), the migrations as numbered steps, and one module per group of tables."""

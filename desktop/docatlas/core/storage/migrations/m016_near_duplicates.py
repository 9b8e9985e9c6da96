"""Migration 16: near-duplicate chunks and the questions asked, for extraction ordered by interest.

`chunk_bands` holds the LSH band hashes of each chunk that is an original (`base.fingerprints`):
a new chunk that shares a band with one is a candidate, checked exactly. `chunk_copies` says
which stored chunk a copy repeats (and `also_id`, the original's neighbour when the copy's
text straddles the two: a forwarded document whose chunks were cut one paragraph later): the
copy is never sent to the model; it takes the originals' records that its own text backs
(`ingest.copies`). Both go with their chunks.
`asked_questions` keeps the last questions asked (a trigger copies each new answer's question,
so they outlive the answer cache's pruning); the run extracts the chunks that match them first.
Chunks stored before this step get no bands (a copy of one is read by the model, as before).
"""

SQL = """
    CREATE TABLE IF NOT EXISTS chunk_bands (
        band INTEGER NOT NULL,
        hash INTEGER NOT NULL,
        chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        PRIMARY KEY (band, hash, chunk_id)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS chunk_bands_chunk ON chunk_bands(chunk_id);
    CREATE TABLE IF NOT EXISTS chunk_copies (
        chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        original_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        also_id INTEGER REFERENCES chunks(id) ON DELETE CASCADE,
        similarity REAL NOT NULL);
    CREATE INDEX IF NOT EXISTS chunk_copies_original ON chunk_copies(original_id);
    CREATE INDEX IF NOT EXISTS chunk_copies_also ON chunk_copies(also_id);
    CREATE TABLE IF NOT EXISTS asked_questions (question TEXT PRIMARY KEY, asked_at REAL NOT NULL);
    CREATE INDEX IF NOT EXISTS asked_questions_at ON asked_questions(asked_at);
    CREATE TRIGGER IF NOT EXISTS answers_asked AFTER INSERT ON answers BEGIN
        INSERT INTO asked_questions(question, asked_at) VALUES (NEW.question, NEW.created_at)
            ON CONFLICT(question) DO UPDATE SET asked_at = MAX(asked_at, excluded.asked_at);
        DELETE FROM asked_questions WHERE question NOT IN (
            SELECT question FROM asked_questions ORDER BY asked_at DESC LIMIT 50);
    END;
    INSERT OR IGNORE INTO asked_questions(question, asked_at)
        SELECT question, MAX(created_at) FROM answers GROUP BY question;
    """

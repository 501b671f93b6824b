-- One row per uploaded batch. The validated pages are kept as one jsonb value so an upload costs one row insert
-- (group commit inserts many in one statement); aggregates expand them at query time.
-- Nothing here can identify a person: no address, no arrival time, no label; the key is random per batch and the
-- deletion secret is kept only as its SHA-256.
CREATE TABLE batches (
  key text PRIMARY KEY,
  -- SHA-256 (hex) of the request body: a replay with the same body is a duplicate, any other is a conflict.
  body_sha256 text NOT NULL,
  -- SHA-256 (hex) of the deletion secret the uploader chose.
  token_sha256 text NOT NULL,
  -- Network type and pages; both NULL once the uploader deleted the batch (a tombstone, so a late retry of the
  -- same upload is answered as a duplicate instead of bringing the data back).
  network text,
  pages jsonb
);

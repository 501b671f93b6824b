-- Publication per epoch (issue 13): a batch's epoch is the UTC day of its page's hour, so publishing one day reads
-- only that day's batches (by index) instead of every stored page; a deleted batch drops it with its data.
ALTER TABLE batches ADD COLUMN epoch text;
UPDATE batches SET epoch = left(pages->0->>'hour', 10) WHERE pages IS NOT NULL;
CREATE INDEX batches_epoch ON batches (epoch);

-- What was published of each epoch, once: the noisy figures are computed when the day is closed plus a delay and
-- stored, so a restart, another instance or a late upload never produces a second, different release of that day
-- (two releases of the same data would let their noise be compared). First writer wins (ON CONFLICT DO NOTHING).
CREATE TABLE publications (
  epoch text PRIMARY KEY,
  published_at timestamptz NOT NULL DEFAULT now(),
  epsilon float8 NOT NULL,
  min_pages int NOT NULL,
  cells jsonb NOT NULL
);

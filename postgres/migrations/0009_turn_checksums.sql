-- The CRC-32C of a hot turn row's content fields (turnsum.go), checked on
-- every read of the row; NULL while the row's content is with its span
-- (warm or cold), whose block or segment is checked instead. PostgreSQL
-- has no CRC-32C: Migrate fills the column of the existing hot rows from
-- Go right after this step, in the same transaction (fillTurnSums).
ALTER TABLE turns ADD COLUMN crc bigint;

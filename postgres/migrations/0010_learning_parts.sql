-- A learning read as a statement about a named subject keeps its parts
-- (strata.Learning: about, attribute, value), the date its time words
-- name (fact_when), and the turns it came from, as a JSON list of
-- {"seq", "ext_id"} (empty text: none known).
ALTER TABLE learnings ADD COLUMN about     text NOT NULL DEFAULT '';
ALTER TABLE learnings ADD COLUMN attribute text NOT NULL DEFAULT '';
ALTER TABLE learnings ADD COLUMN value     text NOT NULL DEFAULT '';
ALTER TABLE learnings ADD COLUMN fact_when text NOT NULL DEFAULT '';
ALTER TABLE learnings ADD COLUMN sources   text NOT NULL DEFAULT '';

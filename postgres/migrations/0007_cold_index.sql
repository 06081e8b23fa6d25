-- A cold turn keeps its rows in turn_index: every turn is findable by its
-- own words whatever its tier. Earlier versions took a cold span's turns
-- out of the index; their level-1 nodes are listed here until Open has
-- indexed those turns again from the span's segments (coldindex.go).
CREATE TABLE cold_unindexed (
	node  bigint  PRIMARY KEY REFERENCES nodes (pk) ON DELETE CASCADE
);
INSERT INTO cold_unindexed (node) SELECT pk FROM nodes WHERE level = 1 AND tier = 2;

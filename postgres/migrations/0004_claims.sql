-- Claims (strata.ClaimStore): a lease on one unit of background work, so
-- that the servers sharing this database do each unit once. A row is held
-- by holder while the claimer's clock is before until; a released claim
-- is deleted, an ended one stays until another holder takes the key over.
CREATE TABLE claims (
	unit   bytea  PRIMARY KEY, -- the claim's key (bytes: keys may hold NUL)
	holder bytea  NOT NULL,
	since  bigint NOT NULL,    -- unix nanoseconds: when holder took it
	until  bigint NOT NULL     -- unix nanoseconds
);

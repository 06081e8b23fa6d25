-- Adding learnings reads the ones of each new subject that are not
-- superseded (rejected ones included), which learnings_active does not
-- cover: without this index each read scanned every learning of the
-- conversation, so a conversation's learn pass grew with the square of
-- its learnings.
CREATE INDEX IF NOT EXISTS learnings_subject ON learnings (conversation, subject);

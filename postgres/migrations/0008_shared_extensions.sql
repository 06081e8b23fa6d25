-- Several stores in one database, one per schema. Extensions belong to
-- the database, one copy each, but versions before this one let the first
-- step create them in the first schema of the search_path: the first
-- store's own. A second store could not find them there, and dropping the
-- first store's schema dropped them, and with them every column, index
-- and text search configuration of the other stores built on them.
--
-- Migrate now creates a missing extension in public before the steps
-- run, and runs them with the extensions' schemas on the search_path.
-- This step moves an extension that lives in a strata store's schema
-- (this one, or any holding the strata_text configuration) to public.
-- Its objects keep their identities, so what other stores built on them
-- goes on working, and a store that found them through a search_path
-- such as "team_a,public" still does.
DO $$
DECLARE
	e   text;
	pub oid := to_regnamespace('public');
BEGIN
	FOR e IN SELECT x.extname FROM pg_extension x
		WHERE x.extname IN ('vector', 'unaccent')
		  AND x.extnamespace IS DISTINCT FROM pub
		  AND (x.extnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
		       OR EXISTS (SELECT FROM pg_ts_config c WHERE c.cfgname = 'strata_text' AND c.cfgnamespace = x.extnamespace))
		ORDER BY 1
	LOOP
		IF pub IS NULL THEN
			RAISE EXCEPTION 'extension % lives in the schema of a strata store, and there is no schema public to move it to', e
				USING HINT = 'CREATE SCHEMA public, or move the extension yourself: ALTER EXTENSION ' || e || ' SET SCHEMA another_schema';
		END IF;
		EXECUTE format('ALTER EXTENSION %I SET SCHEMA public', e);
	END LOOP;
END $$;

-- The trigger functions name the store's tables unqualified: they run
-- with the store's schema as their search_path, so that they find this
-- store's tables whatever the search_path of the statement that fires
-- them (a session whose path starts with another store's schema would
-- otherwise update that store's statistics). pg_temp last, so that no
-- temporary table stands in for one of them. Renaming the schema needs
-- these settings renamed too.
DO $$
DECLARE
	f text;
BEGIN
	FOREACH f IN ARRAY ARRAY['strata_node_summary_changed', 'strata_node_vectors_removed', 'strata_fts_fill',
		'strata_fts_added', 'strata_fts_removed', 'strata_fts_conversation_deleted']
	LOOP
		EXECUTE format('ALTER FUNCTION %I.%I() SET search_path = %I, pg_temp', current_schema(), f, current_schema());
	END LOOP;
END $$;

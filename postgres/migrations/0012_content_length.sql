-- A document's length counts its content words only: the words of the
-- text but the stop words no query searches for (package textseg's
-- list, the same the SQLite store leaves out of its full-text tables from
-- its schema 25), so that BM25 ranks a conversation's turns as a new
-- SQLite store does. Rows indexed before this version keep the length
-- they were given.
CREATE OR REPLACE FUNCTION strata_fts_length(words text) RETURNS integer
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN (SELECT count(*) FROM unnest(string_to_array(btrim(words, ' '), ' ')) AS w
		WHERE w <> '' AND lower(w) <> ALL (ARRAY[
		'a', 'about', 'above', 'after', 'again', 'against', 'all', 'am', 'an',
		'and', 'any', 'are', 'as', 'at', 'be', 'because', 'been', 'before',
		'being', 'below', 'between', 'both', 'but', 'by', 'can', 'could', 'did',
		'do', 'does', 'doing', 'down', 'during', 'each', 'few', 'for', 'from',
		'further', 'had', 'has', 'have', 'having', 'he', 'her', 'here', 'hers',
		'herself', 'him', 'himself', 'his', 'how', 'i', 'if', 'in', 'into', 'is',
		'it', 'its', 'itself', 'just', 'me', 'more', 'most', 'my', 'myself', 'no',
		'nor', 'not', 'of', 'off', 'on', 'once', 'only', 'or', 'other', 'our',
		'ours', 'ourselves', 'out', 'over', 'own', 'same', 'she', 'should', 'so',
		'some', 'such', 'than', 'that', 'the', 'their', 'theirs', 'them',
		'themselves', 'then', 'there', 'these', 'they', 'this', 'those', 'through',
		'to', 'too', 'under', 'until', 'up', 'very', 'was', 'we', 'were', 'what',
		'when', 'where', 'which', 'while', 'who', 'whom', 'why', 'will', 'with',
		'would', 'you', 'your', 'yours', 'yourself', 'yourselves', 's', 't', 'd',
		'll', 'm', 're', 've', 'don', 'doesn', 'didn', 'isn', 'aren', 'wasn',
		'weren'
		]))::integer;

package strata

// FactsLimit is how many learnings a known-facts section reads, for tests.
const FactsLimit = factsLimit

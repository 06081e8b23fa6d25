package loomgen

// Word lists for the names of tests and keys. Within a list no word is a
// prefix of another, so a name of k words never holds another name of k
// words (TestVocab checks it).

var pyWords = []string{
	"shard", "resume", "sampler", "epoch", "accum", "window", "bucket", "fused",
	"warmup", "cosine", "stream", "packing", "mask", "rotary", "offset", "clip",
	"scaler", "parity", "seed", "order", "prefetch", "pinned", "barrier", "ranks",
	"mixed", "bf16", "dedup", "vocab", "restore", "layout", "gather", "zero3",
	"fsdp", "metric", "tokens", "label",
}

var jlWords = []string{
	"Heat", "Flux", "Halo", "Stencil", "Courant", "Implicit", "Explicit", "Adaptive",
	"periodic", "boundary", "conservation", "energy", "stiffness", "refinement",
	"timestep", "kernel", "solver", "residual", "jacobian", "preconditioner",
	"symmetry", "dissipation", "advection", "diffusion", "rollback", "checkpoint",
}

var rWords = []string{
	"weighted", "means", "respect", "NA", "cohort", "filters", "drop", "visits",
	"survival", "curves", "stratify", "by", "site", "bootstrap", "intervals",
	"cover", "truth", "imputation", "keeps", "factor", "levels", "summaries",
	"match", "golden", "tables", "quantiles", "handle", "ties",
}

var cljWords = []string{
	"lease", "renew", "expiry", "fencing", "token", "backoff", "jitter", "bounds",
	"queue", "drain", "priority", "aging", "preempt", "quota", "tenant", "retry",
	"budget", "heartbeat", "sweep", "orphan", "reclaim", "epoch", "monotonic", "handoff",
}

var luaWords = []string{
	"bucket", "refills", "after", "window", "rejects", "expired", "claims", "issuer",
	"mismatch", "forwards", "tenant", "header", "strips", "hop", "cookies", "limits",
	"burst", "per", "route", "caches", "jwks", "keys", "rotates", "signing",
}

var zigWords = []string{
	"manifest", "trailing", "comma", "rejected", "nested", "tables", "parse", "escapes",
	"unicode", "keys", "duplicate", "detected", "empty", "arrays", "round", "trip",
	"integer", "overflow", "reported", "inline", "comments", "skipped", "quoted", "paths",
}

var keyWords = []string{
	"grad", "ckpt", "shard", "prefetch", "warmup", "bucket", "stall", "retry",
	"window", "lease", "quota", "drain", "mem", "heal", "spill", "pin",
}

var keyUnits = []string{"bytes", "steps", "seconds", "limit", "ratio", "depth", "count", "mib"}

var upperWords = []string{
	"RESUME", "SHARD", "FENCE", "SPILL", "HEAL", "PIN", "STALL", "DRAIN",
	"WINDOW", "BUDGET", "QUOTA", "GRACE",
}

// Package tiermove holds the tier and pyramid algorithms of the stores,
// written once: which spans move and in what order, what is read back
// before it replaces what, and what each caller is told. A store
// implements the primitives (one SQL statement or one archive write
// each, against its own schema) on a value bound to one of its
// transactions over one conversation; each store method opens that
// transaction, calls the algorithm and commits. The formats (CTF blocks,
// archive records, segment periods) are package spanfmt's.
//
// # The archive and the commit
//
// A move to cold writes the archive first and points the nodes at it
// after: Demote merges each period's records into its segment (the
// segment read back by archive.Segments before it replaces the old one)
// and records the segment, then marks each node cold with the periods it
// now names, then slims its rows; the store commits last. Where the
// segments are written is the store's:
//
//   - postgres keeps them in a table of the same database, inside the
//     same transaction: the move commits whole or not at all.
//   - sqlite keeps them in files, renamed into place as each merge ends,
//     before the commit, while the store holds its write lock. A kill
//     between a merge and the commit leaves records for a span still
//     warm: a span's seqs are looked up only in the segments it names, so
//     none reads them; the next Demote of that span rewrites them in
//     place, and the store's archive scrub removes the rest.
//
// SetImportance writes a turn's record the same way, before the commit
// (a kill between leaves a record its row does not read).
//
// Removing records follows the same rule the other way round: the rows
// and nodes stop needing them first, and the records leave the segments
// after, through ExpireTx.DropRecords (Expire), PyramidTx.DropRestored
// (ReplaceNodes) and ResetTx.DropArchive (ResetPyramid). postgres carries
// them out in the transaction; sqlite after it commits, under its write
// lock, since until then the files must still hold what the rows of the
// uncommitted state would read.
//
// # The algorithms
//
// Demote (to warm or cold), Expire, SetImportance, ReplaceNodes (with
// withAncestors and checkChildren), ResetPyramid, and RestoreStubs, the
// way back from a span's copy into the rows that the last two share. The
// rules they apply that are not about storage (which pin move, which
// node may be removed) are the root package's: strata.DecidePin,
// strata.CheckNodeRemoval.
package tiermove

import "github.com/strata-memory/strata"

// Span is a level-1 node as the tier code reads it.
type Span struct {
	PK          int64 // the node's row key
	ID          string
	Level       int
	First, Last int64 // the seqs of its first and last turn
	Tier        int   // spanfmt tier code
	Block       []byte
	Periods     []string // the periods of the segments holding a cold span's records
}

// Row is a turn of a span, whole, with its row's key and tier.
type Row struct {
	Key  int64 // the store's key of the row, where it has one
	Tier int
	Turn strata.Turn
}

// Tx is every primitive of the package: what a store implements once, on
// the value it binds to a transaction, to run every algorithm.
type Tx interface {
	DemoteTx
	ExpireTx
	PinTx
	PyramidTx
	ResetTx
	StubTx
}

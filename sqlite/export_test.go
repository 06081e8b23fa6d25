package sqlite

import (
	"context"
	"encoding/json"

	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/storetest"
)

// TextDictionary is a dictionary trained on samples, with its id.
type TextDictionary struct {
	id   uint32
	dict []byte
}

// BuildTextDictionary trains a dictionary on samples as Vacuum would.
func BuildTextDictionary(samples []string) (TextDictionary, error) {
	bs := make([][]byte, len(samples))
	for i, x := range samples {
		bs[i] = []byte(x)
	}
	id, dict, err := buildTextDictionary(bs)
	return TextDictionary{id, dict}, err
}

// InstallTextDictionary gives s the dictionary d and has it write every
// text as a frame, however short, so that tests run the compressed paths
// on the short texts they write.
func InstallTextDictionary(ctx context.Context, s *Store, d TextDictionary) error {
	s.text.min, s.text.always = 1, true
	return s.storeTextDictionary(ctx, d.id, d.dict)
}

// SetSummaryIndexMinTurns sets the conversation length from which
// summaries are ranked in memory, and returns a function that restores it.
func SetSummaryIndexMinTurns(n int64) func() {
	old := sumIndexMinTurns.Swap(n)
	return func() { sumIndexMinTurns.Store(old) }
}

// ChildFrames counts the nodes of s with a text framed against their
// children.
func ChildFrames(ctx context.Context, s *Store) (int, error) {
	rows, err := s.w.QueryContext(ctx, `SELECT summary, coalesce(facts, ''), coalesce(themes, '') FROM nodes`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var a, b, c string
		if err := rows.Scan(&a, &b, &c); err != nil {
			return 0, err
		}
		if againstChildren(a) || againstChildren(b) || againstChildren(c) {
			n++
		}
	}
	return n, rows.Err()
}

// DaySegments returns what storetest.RunDaySegments needs of s to lay
// its archive out as versions before month segments did.
func DaySegments(s *Store) storetest.Legacy {
	return storetest.Legacy{
		Blobs: s.seg.Blobs,
		SetPeriods: func(ctx context.Context, ns, conv, id string, periods []string) error {
			pk, err := conversationPK(ctx, s.w, ns, conv)
			if err != nil {
				return err
			}
			pj, _ := json.Marshal(periods)
			_, err = s.w.ExecContext(ctx, `UPDATE nodes SET segments = ? WHERE conversation = ? AND id = ?`, string(pj), pk, id)
			return err
		},
		PutSegment: func(ctx context.Context, ns, conv, period string, info archive.Info) error {
			pk, err := conversationPK(ctx, s.w, ns, conv)
			if err != nil {
				return err
			}
			return putSegment(ctx, s.w, pk, period, info)
		},
		// Demote writes segments before the transaction that points the
		// nodes at them.
		Orphans: true,
	}
}

package storetest_test

import (
	"context"
	"math"
	"slices"

	"github.com/strata-memory/strata"
)

// embStore is a strata.Store whose embedding methods can be replaced.
type embStore struct {
	strata.Store
	unembedded func(ctx context.Context, f strata.EmbedFilter) ([]strata.EmbedSource, error)
	put        func(ctx context.Context, ns, conv string, space strata.EmbedSpace, es []strata.Embedding) error
	vectors    func(ctx context.Context, f strata.VectorFilter, fn func(strata.Vector) error) error
	version    func(ctx context.Context, ns, conv string) (strata.VectorVersion, error)
	del        func(ctx context.Context, ns, conv string, keep strata.EmbedSpace) (int64, error)
	counts     func(ctx context.Context, ns, conv string) ([]strata.VectorCounts, error)
}

func (s *embStore) Unembedded(ctx context.Context, f strata.EmbedFilter) ([]strata.EmbedSource, error) {
	if s.unembedded != nil {
		return s.unembedded(ctx, f)
	}
	return s.Store.Unembedded(ctx, f)
}

func (s *embStore) PutEmbeddings(ctx context.Context, ns, conv string, space strata.EmbedSpace, es []strata.Embedding) error {
	if s.put != nil {
		return s.put(ctx, ns, conv, space, es)
	}
	return s.Store.PutEmbeddings(ctx, ns, conv, space, es)
}

func (s *embStore) Vectors(ctx context.Context, f strata.VectorFilter, fn func(strata.Vector) error) error {
	if s.vectors != nil {
		return s.vectors(ctx, f, fn)
	}
	return s.Store.Vectors(ctx, f, fn)
}

func (s *embStore) VectorVersion(ctx context.Context, ns, conv string) (strata.VectorVersion, error) {
	if s.version != nil {
		return s.version(ctx, ns, conv)
	}
	return s.Store.VectorVersion(ctx, ns, conv)
}

func (s *embStore) DeleteEmbeddings(ctx context.Context, ns, conv string, keep strata.EmbedSpace) (int64, error) {
	if s.del != nil {
		return s.del(ctx, ns, conv, keep)
	}
	return s.Store.DeleteEmbeddings(ctx, ns, conv, keep)
}

func (s *embStore) VectorCounts(ctx context.Context, ns, conv string) ([]strata.VectorCounts, error) {
	if s.counts != nil {
		return s.counts(ctx, ns, conv)
	}
	return s.Store.VectorCounts(ctx, ns, conv)
}

// The embedding rules each have a mutant; they join the suite's.
func init() {
	for name, m := range map[string]mutant{
		"stores vectors as float16": {"EmbeddingsRoundTrip", func(s strata.Store) strata.Store {
			return &embStore{Store: s, put: func(ctx context.Context, ns, conv string, space strata.EmbedSpace, es []strata.Embedding) error {
				es = slices.Clone(es)
				for i := range es {
					es[i].Vector = slices.Clone(es[i].Vector)
					for j, x := range es[i].Vector {
						// 10 bits of mantissa, as float16 keeps.
						es[i].Vector[j] = math.Float32frombits(math.Float32bits(x) &^ (1<<13 - 1))
					}
				}
				return s.PutEmbeddings(ctx, ns, conv, space, es)
			}}
		}},
		"lists what has a vector": {"EmbeddingsRoundTrip", func(s strata.Store) strata.Store {
			return &embStore{Store: s, unembedded: func(ctx context.Context, f strata.EmbedFilter) ([]strata.EmbedSource, error) {
				f.Space.Model += "'"
				return s.Unembedded(ctx, f)
			}}
		}},
		"pages from the start": {"EmbeddingsPaging", func(s strata.Store) strata.Store {
			return &embStore{Store: s, unembedded: func(ctx context.Context, f strata.EmbedFilter) ([]strata.EmbedSource, error) {
				if f.After != nil && f.After.Level == 0 {
					f.After = nil // a turn cursor is lost, a node cursor kept
				}
				return s.Unembedded(ctx, f)
			}}
		}},
		"ignores the dimension": {"EmbeddingsSpaces", func(s strata.Store) strata.Store {
			return &embStore{Store: s, unembedded: func(ctx context.Context, f strata.EmbedFilter) ([]strata.EmbedSource, error) {
				f.Space.Dim = 0
				return s.Unembedded(ctx, f)
			}}
		}},
		"stores the good part of a bad put": {"EmbeddingsInvalid", func(s strata.Store) strata.Store {
			return &embStore{Store: s, put: func(ctx context.Context, ns, conv string, space strata.EmbedSpace, es []strata.Embedding) error {
				for _, e := range es {
					if err := s.PutEmbeddings(ctx, ns, conv, space, []strata.Embedding{e}); err != nil {
						return err
					}
				}
				return nil
			}}
		}},
		"streams everything whatever Since": {"EmbeddingsVersion", func(s strata.Store) strata.Store {
			return &embStore{Store: s, vectors: func(ctx context.Context, f strata.VectorFilter, fn func(strata.Vector) error) error {
				f.Since = 0
				return s.Vectors(ctx, f, fn)
			}}
		}},
		"keeps every dimension of the kept model": {"EmbeddingsRemovals", func(s strata.Store) strata.Store {
			return &embStore{Store: s, del: func(ctx context.Context, ns, conv string, keep strata.EmbedSpace) (int64, error) {
				keep.Dim = 0
				return s.DeleteEmbeddings(ctx, ns, conv, keep)
			}}
		}},
		"does not record removals": {"EmbeddingsRemovals", func(s strata.Store) strata.Store {
			return &embStore{Store: s, version: func(ctx context.Context, ns, conv string) (strata.VectorVersion, error) {
				v, err := s.VectorVersion(ctx, ns, conv)
				v.TurnsRemoved, v.NodesRemoved = 0, 0
				return v, err
			}}
		}},
		"counts expired turns as embeddable": {"EmbeddingsTiers", func(s strata.Store) strata.Store {
			return &embStore{Store: s, counts: func(ctx context.Context, ns, conv string) ([]strata.VectorCounts, error) {
				vcs, err := s.VectorCounts(ctx, ns, conv)
				for i := range vcs {
					c, cerr := s.Conversation(ctx, ns, vcs[i].Conversation)
					if cerr == nil {
						vcs[i].Turns = c.Turns
					}
				}
				return vcs, err
			}}
		}},
		"loses the text of warm turns": {"EmbeddingsTiers", func(s strata.Store) strata.Store {
			return &embStore{Store: s, unembedded: func(ctx context.Context, f strata.EmbedFilter) ([]strata.EmbedSource, error) {
				srcs, err := s.Unembedded(ctx, f)
				warm, _ := s.Nodes(ctx, strata.NodeFilter{Namespace: f.Namespace, Conversation: f.Conversation, Level: 1,
					Tiers: []strata.Tier{strata.TierWarm}})
				for i := range srcs {
					for _, n := range warm {
						if srcs[i].Node == "" && srcs[i].Seq >= n.FirstSeq && srcs[i].Seq <= n.LastSeq {
							srcs[i].Text = ""
						}
					}
				}
				return srcs, err
			}}
		}},
	} {
		mutants[name] = m
	}
}

package proxy

import "sync"

// seenCap bounds the conversations whose stored messages the proxy keeps
// in mind; past it, an arbitrary half is dropped (and looked up in the
// store again on their next call).
const seenCap = 1024

// seen remembers, per namespace and conversation, the ext ids of messages
// known to be stored, so that a client that resends its history costs the
// store a lookup of its new messages only. It is a shortcut: the store's
// own ext-id check still stands behind every append, and an entry is
// dropped whenever an append fails.
type seen struct {
	mu sync.Mutex
	m  map[[2]string]map[string]bool
}

// unknown returns the ids not known to be stored.
func (s *seen) unknown(ns, conv string, ids []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	known := s.m[[2]string{ns, conv}]
	var out []string
	for _, id := range ids {
		if !known[id] {
			out = append(out, id)
		}
	}
	return out
}

// stored records that ids are stored.
func (s *seen) stored(ns, conv string, ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[[2]string]map[string]bool{}
	}
	k := [2]string{ns, conv}
	known, ok := s.m[k]
	if !ok {
		if len(s.m) >= seenCap {
			i := 0
			for old := range s.m {
				if i%2 == 0 {
					delete(s.m, old)
				}
				i++
			}
		}
		known = map[string]bool{}
		s.m[k] = known
	}
	for _, id := range ids {
		known[id] = true
	}
}

// forget drops what is known of a conversation.
func (s *seen) forget(ns, conv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, [2]string{ns, conv})
}

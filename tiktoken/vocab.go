package tiktoken

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// vocab is a byte-pair-encoding vocabulary: the rank of every token, which is
// also its id. Lower ranks merge first.
type vocab map[string]uint32

// loadVocab parses the embedded file name, in tiktoken's format: one token
// per line, its bytes in standard base64, a space and its rank.
func loadVocab(name string) (vocab, error) {
	data, err := assets.Assets.ReadFile(name)
	if err != nil {
		return nil, err
	}
	lines := bytes.Count(data, []byte{'\n'})
	// Decode every token into one buffer, which becomes the one string all
	// the keys share.
	buf := make([]byte, 0, base64.StdEncoding.DecodedLen(len(data)))
	ends := make([]int, 0, lines)
	ranks := make([]uint32, 0, lines)
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		if len(line) == 0 {
			continue
		}
		tok, num, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			return nil, fmt.Errorf("%s: malformed line %q", name, line)
		}
		n, err := base64.StdEncoding.Decode(buf[len(buf):cap(buf)], tok)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", name, line, err)
		}
		rank, err := strconv.ParseUint(string(num), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", name, line, err)
		}
		buf = buf[:len(buf)+n]
		ends = append(ends, len(buf))
		ranks = append(ranks, uint32(rank))
	}
	all := string(buf)
	v := make(vocab, len(ranks))
	start := 0
	for i, end := range ends {
		v[all[start:end]] = ranks[i]
		start = end
	}
	if len(v) != len(ranks) {
		return nil, fmt.Errorf("%s: %d lines but %d distinct tokens", name, len(ranks), len(v))
	}
	return v, nil
}

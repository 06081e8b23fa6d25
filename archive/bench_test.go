package archive

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkMerge100 merges 100 records of ~300 bytes into an empty
// segment (fsyncs included).
func BenchmarkMerge100(b *testing.B) {
	rs := recs("a", span(1, 100)...)
	dir := b.TempDir()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := Merge(filepath.Join(dir, fmt.Sprint(i), Name(testDay)), rs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead100 reads a 100-record span of a segment of n records.
func BenchmarkRead100(b *testing.B) {
	for _, n := range []int64{100, 1000} {
		b.Run(fmt.Sprintf("of%d", n), func(b *testing.B) {
			path := segPath(b)
			in := mustMerge(b, path, recs("a", span(1, n)...))
			b.SetBytes(in.RawBytes)
			b.ReportAllocs()
			for b.Loop() {
				got, err := Read(path, (n-100)/2+1, (n-100)/2+100)
				if err != nil || len(got) != 100 {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}

func BenchmarkCompress(b *testing.B) {
	block := encode(recs("a", span(1, 10)...))
	b.SetBytes(int64(len(block)))
	for b.Loop() {
		if _, err := Decompress(Compress(block)); err != nil {
			b.Fatal(err)
		}
	}
}

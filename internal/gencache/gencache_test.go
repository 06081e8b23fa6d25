package gencache

import "testing"

// TestGenerations: an entry stays while it is used once per generation,
// goes after two generations without use, and the cache never holds more
// than two generations.
func TestGenerations(t *testing.T) {
	c := New[int, int](4)
	c.Put(-1, 100)
	for i := range 12 {
		c.Put(i, i*10)
		if i%3 == 0 {
			if v, ok := c.Get(-1); !ok || v != 100 {
				t.Fatalf("after %d puts, the entry used every 3 is %d, %v", i+1, v, ok)
			}
		}
		if n := len(c.cur) + len(c.older); n > 2*c.size {
			t.Fatalf("%d entries held, want at most %d", n, 2*c.size)
		}
	}
	if _, ok := c.Get(0); ok {
		t.Fatal("an entry unused for two generations is still held")
	}
	if v, ok := c.Get(11); !ok || v != 110 {
		t.Fatalf("the newest entry reads %d, %v", v, ok)
	}
}

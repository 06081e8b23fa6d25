package spanfmt

import "testing"

// TestRowSumGolden pins the checksum of two rows to the values the stores
// computed before the sum was shared (and have written into every hot
// row since): a change here would fail every stored row.
func TestRowSumGolden(t *testing.T) {
	for _, c := range []struct {
		row  Row
		want uint32
	}{
		{Row{Seq: 12345, ExtID: RowText{"msg-0001", true}, Session: 3, Label: "s3", Role: "assistant", Name: "Ana",
			Content: RowText{"the otter crossed the weir ünïcode", true}, Time: 1700000000123456789, HasTime: true, Model: "m",
			ToolCalls: RowText{`[{"id":"c1"}]`, true}, Tokens: 250, Metadata: RowText{`{"k":"v"}`, true}}, 0xc1380d9b},
		{Row{Seq: -7, Role: "user", Content: RowText{"", true}}, 0xed3ca23b},
	} {
		if got := c.row.Sum(); got != c.want {
			t.Errorf("row %d: sum %08x, want %08x", c.row.Seq, got, c.want)
		}
	}
	// Each field counts, NULL differs from empty.
	base := Row{Seq: 1, Role: "user", Content: RowText{"x", true}}
	for name, f := range map[string]func(*Row){
		"seq": func(r *Row) { r.Seq++ }, "ext_id": func(r *Row) { r.ExtID = RowText{"", true} },
		"content": func(r *Row) { r.Content.S = "y" }, "time": func(r *Row) { r.HasTime = true },
		"tags": func(r *Row) { r.Tags.Valid = true }, "tokens": func(r *Row) { r.Tokens = 1 },
	} {
		r := base
		f(&r)
		if r.Sum() == base.Sum() {
			t.Errorf("changing %s leaves the sum as it was", name)
		}
	}
}

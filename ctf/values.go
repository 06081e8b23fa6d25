package ctf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// Helpers shared by the turn and node mappings: how one typed value is
// written into a field and read back.

// appendInt appends a decimal integer; it never needs escaping.
func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// appendText appends a string field, which must be valid UTF-8.
func appendText(dst []byte, s string) ([]byte, string) {
	if !utf8.ValidString(s) {
		return dst, "invalid UTF-8"
	}
	return appendEscaped(dst, s), ""
}

// appendTime appends t in UTC as RFC 3339 with nanoseconds, or "-" for the
// zero time.
func appendTime(dst []byte, t time.Time) ([]byte, string) {
	if t.IsZero() {
		return append(dst, NullField...), ""
	}
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, fmt.Sprintf("year %d is outside 0000..9999 (RFC 3339)", y)
	}
	return t.AppendFormat(dst, time.RFC3339Nano), ""
}

// appendFloat appends f in the shortest form that parses back to f.
func appendFloat(dst []byte, f float64) []byte { return strconv.AppendFloat(dst, f, 'g', -1, 64) }

// appendBool appends "true" or "false".
func appendBool(dst []byte, v bool) []byte { return strconv.AppendBool(dst, v) }

// jsonWriter marshals values as compact JSON without HTML escaping.
type jsonWriter struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// appendJSON appends v as compact JSON text, escaped like any string.
func (w *jsonWriter) appendJSON(dst []byte, v any) ([]byte, string) {
	if w.enc == nil {
		w.enc = json.NewEncoder(&w.buf)
		w.enc.SetEscapeHTML(false)
	}
	w.buf.Reset()
	if err := w.enc.Encode(v); err != nil {
		return dst, err.Error()
	}
	return appendEscaped(dst, bytes.TrimSuffix(w.buf.Bytes(), []byte{'\n'})), ""
}

// appendStrings appends a list of strings as a JSON array, or nothing for
// an empty list.
func (w *jsonWriter) appendStrings(dst []byte, list []string) ([]byte, string) {
	if len(list) == 0 {
		return dst, ""
	}
	for i, s := range list {
		if !utf8.ValidString(s) {
			return dst, fmt.Sprintf("item %d: invalid UTF-8", i)
		}
	}
	return w.appendJSON(dst, list)
}

// validJSONText reports where a value bound for encoding/json holds invalid
// UTF-8 (which encoding/json would silently replace), or "". It looks into
// the types JSON decoding produces and plain string slices and maps.
func validJSONText(v any, path string) string {
	switch v := v.(type) {
	case string:
		if !utf8.ValidString(v) {
			return path + ": invalid UTF-8"
		}
	case []any:
		for i, x := range v {
			if m := validJSONText(x, path+"["+strconv.Itoa(i)+"]"); m != "" {
				return m
			}
		}
	case []string:
		for i, x := range v {
			if !utf8.ValidString(x) {
				return path + "[" + strconv.Itoa(i) + "]: invalid UTF-8"
			}
		}
	case map[string]any:
		for k, x := range v {
			if !utf8.ValidString(k) {
				return path + ": a key is invalid UTF-8"
			}
			if m := validJSONText(x, path+"."+k); m != "" {
				return m
			}
		}
	case map[string]string:
		for k, x := range v {
			if !utf8.ValidString(k) || !utf8.ValidString(x) {
				return path + "." + k + ": invalid UTF-8"
			}
		}
	}
	return ""
}

// parseInt reads an integer field; null and empty read as 0.
func parseInt(v Value, bits int) (int64, string) {
	if v.Null || v.S == "" {
		return 0, ""
	}
	n, err := strconv.ParseInt(v.S, 10, bits)
	if err != nil {
		return 0, fmt.Sprintf("%q is not an integer", clip(v.S))
	}
	return n, ""
}

// parseFloat reads a number field; null and empty read as 0.
func parseFloat(v Value) (float64, string) {
	if v.Null || v.S == "" {
		return 0, ""
	}
	f, err := strconv.ParseFloat(v.S, 64)
	if err != nil {
		return 0, fmt.Sprintf("%q is not a number", clip(v.S))
	}
	return f, ""
}

// parseBool reads a boolean field; null and empty read as false.
func parseBool(v Value) (bool, string) {
	if v.Null || v.S == "" {
		return false, ""
	}
	b, err := strconv.ParseBool(v.S)
	if err != nil {
		return false, fmt.Sprintf("%q is not true or false", clip(v.S))
	}
	return b, ""
}

// zoneless is how the original sketch wrote times: no zone, read as UTC. A
// fractional second is accepted after the seconds.
const zoneless = "2006-01-02T15:04:05"

// parseTime reads a time field: RFC 3339 (any offset; the result is in
// UTC), or a time without a zone, read as UTC. Null and empty read as the
// zero time; the zero time written out (0001-01-01T00:00:00Z) is an error,
// since it would read back as no time.
func parseTime(v Value) (time.Time, string) {
	if v.Null || v.S == "" {
		return time.Time{}, ""
	}
	t, err := time.Parse(time.RFC3339Nano, v.S)
	if err != nil {
		var err2 error
		if t, err2 = time.Parse(zoneless, v.S); err2 != nil {
			return time.Time{}, fmt.Sprintf("%q is not an RFC 3339 time", clip(v.S))
		}
	}
	if t.IsZero() {
		// The encoder writes no time as null; this instant would read back
		// as no time, and an import would stamp it with the clock.
		return time.Time{}, fmt.Sprintf("%q is the zero time, which means no time: leave the field null (-) for none", clip(v.S))
	}
	return t.UTC(), ""
}

// parseJSON reads a JSON field into v. It reports false, with no error, for
// null and empty fields.
func parseJSON(f Value, v any, what string) (bool, string) {
	if f.Null || f.S == "" {
		return false, ""
	}
	if err := json.Unmarshal([]byte(f.S), v); err != nil {
		return false, fmt.Sprintf("want %s as JSON: %v", what, err)
	}
	return true, ""
}

// parseStrings reads a JSON array of strings; empty reads as nil.
func parseStrings(f Value) ([]string, string) {
	var list []string
	if _, msg := parseJSON(f, &list, "an array of strings"); msg != "" {
		return nil, msg
	}
	if len(list) == 0 {
		return nil, ""
	}
	return list, ""
}

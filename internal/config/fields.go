package config

import (
	"reflect"
	"slices"
	"strings"
)

// fields are the TOML keys of struct type t, in declaration order, with
// the fields of embedded structs as their own (as go-toml decodes them).
func fields(t reflect.Type) []tomlField {
	var out []tomlField
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			for _, f := range fields(sf.Type) {
				out = append(out, tomlField{f.name, append([]int{i}, f.index...), f.typ})
			}
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
		if name == "" || name == "-" || !sf.IsExported() {
			continue
		}
		out = append(out, tomlField{name, []int{i}, sf.Type})
	}
	return out
}

type tomlField struct {
	name  string
	index []int
	typ   reflect.Type
}

// Changed lists the keys whose values differ between a and b, as TOML
// names them ("server.listen"): a table's keys one by one, an array of
// tables ("workdirs") or a map of tables ("policy.workdirs") as one key.
func Changed(a, b *Config) []string {
	var out []string
	var walk func(prefix string, va, vb reflect.Value)
	walk = func(prefix string, va, vb reflect.Value) {
		for _, f := range fields(va.Type()) {
			fa, fb := va.FieldByIndex(f.index), vb.FieldByIndex(f.index)
			key := prefix + f.name
			switch {
			case f.typ.Kind() == reflect.Struct:
				walk(key+".", fa, fb)
			case !reflect.DeepEqual(fa.Interface(), fb.Interface()):
				out = append(out, key)
			}
		}
	}
	walk("", reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem())
	return out
}

// suggest returns the known key closest to key, an unknown key as the
// decoder names it ("limits.max_read_byte", "workdirs[1].paht"), or "":
// at the first part of key that names nothing, the known name at that
// level within two edits of it, with the parts before it.
func suggest(key string) string {
	t := reflect.TypeOf(Config{})
	var known []string
	for part := range strings.SplitSeq(key, ".") {
		name, _, _ := strings.Cut(part, "[") // workdirs[1]
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem() // an element of an array of tables
		}
		if t.Kind() == reflect.Map {
			known = append(known, part) // a map of tables: this part is its key, any name
			t = t.Elem()
			continue
		}
		if t.Kind() != reflect.Struct {
			return ""
		}
		fs := fields(t)
		i := slices.IndexFunc(fs, func(f tomlField) bool { return f.name == name })
		if i >= 0 {
			known = append(known, part)
			t = fs[i].typ
			continue
		}
		best, bestD := "", 3
		for _, f := range fs {
			if d := editDistance(name, f.name); d < bestD {
				best, bestD = f.name, d
			}
		}
		if best == "" {
			return ""
		}
		return strings.Join(append(known, best), ".")
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (keys are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

package config

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// keyIndex records where each key of a TOML document is. Problems found
// after decoding (an out-of-range value, a duplicate alias) use it to point
// at a line; decoder errors, whose keys are relative to an inline table and
// carry no array indexes, use it to name the full key.
//
// It is built with go-toml's unstable parser, whose API may change between
// minor versions; go.mod pins the version and the tests pin the behavior.
type keyIndex struct {
	doc     []byte
	entries []keyEntry
}

// keyEntry is one key-value, table header or array element.
type keyEntry struct {
	key        string // limits.max_read_bytes, workdirs[1], workdirs[1].alias
	start, end int    // byte offsets in the document
}

func indexKeys(doc []byte) *keyIndex {
	ix := &keyIndex{doc: doc}
	var p unstable.Parser
	p.Reset(doc)
	arrays := make(map[string]int) // array-of-tables key → elements so far
	var table string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = ix.addHeader(e, arrays)
		case unstable.KeyValue:
			ix.addKeyValue(table, e)
		}
	}
	// A syntax error stops the index there; the decoder reports it.
	return ix
}

// addHeader records a [table] or [[array table]] header and returns its key.
// Following TOML, a header part naming an array of tables refers to its last
// element, so [workdirs.x] after two [[workdirs]] is workdirs[1].x.
func (ix *keyIndex) addHeader(e *unstable.Node, arrays map[string]int) string {
	var key string
	start, end := -1, 0
	it := e.Key()
	for it.Next() {
		part := it.Node()
		if start < 0 {
			start = int(part.Raw.Offset)
		}
		end = int(part.Raw.Offset + part.Raw.Length)
		key = joinKey(key, string(part.Data))
		n, isArray := arrays[key]
		switch {
		case it.IsLast() && e.Kind == unstable.ArrayTable:
			arrays[key] = n + 1
			key += elem(n)
		case isArray:
			key += elem(n - 1)
		}
	}
	ix.entries = append(ix.entries, keyEntry{key, start, end})
	return key
}

// addKeyValue records a key-value in table, and the keys inside its value.
func (ix *keyIndex) addKeyValue(table string, kv *unstable.Node) {
	key := table
	it := kv.Key()
	for it.Next() {
		key = joinKey(key, string(it.Node().Data))
	}
	ix.entries = append(ix.entries, keyEntry{key, int(kv.Raw.Offset), int(kv.Raw.Offset + kv.Raw.Length)})
	ix.addValue(key, kv.Value())
}

func (ix *keyIndex) addValue(key string, v *unstable.Node) {
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if kv := it.Node(); kv.Kind == unstable.KeyValue {
				ix.addKeyValue(key, kv)
			}
		}
	case unstable.Array:
		i := 0
		it := v.Children()
		for it.Next() {
			el := it.Node()
			if el.Kind == unstable.Comment {
				continue
			}
			k := key + elem(i)
			i++
			// Arrays carry no position of their own; the elements inside
			// them are recorded by the recursion.
			if el.Raw.Length > 0 {
				ix.entries = append(ix.entries, keyEntry{k, int(el.Raw.Offset), int(el.Raw.Offset + el.Raw.Length)})
			}
			ix.addValue(k, el)
		}
	}
}

func joinKey(table, key string) string {
	if table == "" {
		return key
	}
	return table + "." + key
}

func elem(i int) string { return fmt.Sprintf("[%d]", i) }

// line returns the line of key or, when key is not in the document, of the
// closest enclosing key that is (so that a missing workdirs[1].alias points
// at its [[workdirs]] header). It returns 0 if there is none.
func (ix *keyIndex) line(key string) int {
	for key != "" {
		for _, e := range ix.entries {
			if e.key == key {
				return 1 + bytes.Count(ix.doc[:e.start], []byte("\n"))
			}
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

// locate returns the full key and the line of a decoder error. go-toml
// places an error at the start of the key-value or header it is about, or
// at the offending value; the entry starting there, or else the innermost
// one around it, names the key. If none does, go-toml's own key is used.
func (ix *keyIndex) locate(de *toml.DecodeError) (key string, line int) {
	line, col := de.Position()
	off := ix.offset(line, col)
	best := -1
	for i, e := range ix.entries {
		if e.start == off {
			return e.key, line
		}
		if e.start <= off && off < e.end && (best < 0 || e.end-e.start < ix.entries[best].end-ix.entries[best].start) {
			best = i
		}
	}
	if best >= 0 {
		return ix.entries[best].key, line
	}
	return strings.Join(de.Key(), "."), line
}

// offset converts a 1-based line and byte column to a byte offset.
func (ix *keyIndex) offset(line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(ix.doc[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	return off + col - 1
}

package jsonrpcline

import (
	"bytes"
	"encoding/json"
)

// The scanners here find where strings and values end without checking
// them: members and valueEnd run on JSON that json.Valid accepted; depth
// runs first, on any bytes, and only needs to stay within b.

// depth returns the deepest nesting of objects and arrays in b.
func depth(b []byte) int {
	d, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i)
		case '{', '[':
			d++
			deepest = max(deepest, d)
		case '}', ']':
			d--
		}
	}
	return deepest
}

// stringEnd returns the index of the closing quote of the string whose
// opening quote is at b[i], or len(b) if it has none.
func stringEnd(b []byte, i int) int {
	// Each quote is found with IndexByte, which is fast on long strings; a
	// quote ends the string unless an odd run of backslashes precedes it.
	for j := i + 1; j < len(b); j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		j += k
		n := 0
		for n < j-i-1 && b[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j
		}
	}
	return len(b)
}

// valueEnd returns the index just past the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i) + 1
	case '{', '[':
		d := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j)
			case '{', '[':
				d++
			case '}', ']':
				if d--; d == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// members returns the members of the object b, their values as sub-slices
// of b (not copied), and the name of a member that appears twice, if one
// does. Names are compared after unescaping, as a decoder sees them.
func members(b []byte) (m map[string]json.RawMessage, dup string) {
	m = make(map[string]json.RawMessage, 8)
	i := skipSpace(b, 1)
	for i < len(b) && b[i] == '"' {
		end := stringEnd(b, i)
		rawName := b[i : end+1]
		name := string(rawName[1 : len(rawName)-1])
		if bytes.IndexByte(rawName, '\\') >= 0 {
			json.Unmarshal(rawName, &name)
		}
		i = skipSpace(b, end+1) + 1 // the colon
		i = skipSpace(b, i)
		vend := valueEnd(b, i)
		if _, ok := m[name]; ok {
			return m, name
		}
		m[name] = b[i:vend]
		i = skipSpace(b, vend)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return m, ""
}

package files

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hostlink/hostlink/internal/fileapi"
)

type lineHit struct {
	line, col int
	text      string
}

func collectHits(m *lineMatcher, data string) []lineHit {
	var out []lineHit
	m.each([]byte(data), func(line, col int, text []byte) bool {
		out = append(out, lineHit{line, col, string(text)})
		return true
	})
	return out
}

// TestLiteralMatchesLineByLine checks the whole-file literal search against
// the line-by-line regular expression it replaces, on fixed and random
// inputs: same lines, same columns, same text.
func TestLiteralMatchesLineByLine(t *testing.T) {
	fixed := []struct{ query, data string }{
		{"ab", ""},
		{"ab", "ab"},
		{"ab", "ab\n"},
		{"ab", "\n\nab"},
		{"ab", "abab\nxab\n\nab\r\nno\nab"},
		{"a.b", "a.b axb a.b\n"},
		{"aa", "aaa\naaaa\n"},
		{"x", "x\nx\nx"},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab\n\rx")
	for range 2000 {
		data := make([]byte, rng.IntN(40))
		for i := range data {
			data[i] = alphabet[rng.IntN(len(alphabet))]
		}
		q := []string{"a", "ab", "ba", "aab", "xa", "bx"}[rng.IntN(6)]
		fixed = append(fixed, struct{ query, data string }{q, string(data)})
	}
	for _, tt := range fixed {
		lit, err := newLineMatcher(fileapi.SearchTextArgs{Query: tt.query})
		if err != nil || lit.literal == nil {
			t.Fatalf("%q: no literal matcher (%v)", tt.query, err)
		}
		byLine := &lineMatcher{re: lit.re}
		got, want := collectHits(lit, tt.data), collectHits(byLine, tt.data)
		if !slices.Equal(got, want) {
			t.Fatalf("query %q in %q:\n literal %v\n by line %v", tt.query, tt.data, got, want)
		}
	}
}

// TestLiteralOnlyWhenSafe checks which queries take the whole-file path:
// not regular expressions, case-insensitive queries or text with line ends.
func TestLiteralOnlyWhenSafe(t *testing.T) {
	tests := []struct {
		args fileapi.SearchTextArgs
		want bool
	}{
		{fileapi.SearchTextArgs{Query: "needle"}, true},
		{fileapi.SearchTextArgs{Query: "a.b(c)"}, true},
		{fileapi.SearchTextArgs{Query: "needle", Regex: true}, false},
		{fileapi.SearchTextArgs{Query: "needle", CaseInsensitive: true}, false},
		{fileapi.SearchTextArgs{Query: "two\nlines"}, false},
		{fileapi.SearchTextArgs{Query: "cr\r"}, false},
	}
	for _, tt := range tests {
		m, err := newLineMatcher(tt.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.literal != nil; got != tt.want {
			t.Errorf("%s: literal path %v, want %v", fmt.Sprintf("%+v", tt.args), got, tt.want)
		}
	}
}

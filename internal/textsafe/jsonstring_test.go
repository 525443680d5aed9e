package textsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendJSONEscaped(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ``},
		{"plain text", `plain text`},
		{`say "hi" \ bye`, `say \"hi\" \\ bye`},
		{"\b\f\n\r\t", `\b\f\n\r\t`},
		{"\x00\x01\x1f", `\u0000\u0001\u001f`},
		{"\x7f", "\x7f"},                       // DEL is JSON's to carry bare
		{"<a> & </script>", `<a> & </script>`}, // HTML escaping off
		{"é 日本 🙂", "é 日本 🙂"},
		{"\u2028\u2029", `\u2028\u2029`},
		{"bad \xff\xfe end", `bad \ufffd\ufffd end`},
		{"cut \xe2\x82", `cut \ufffd\ufffd`},             // a character's first two bytes
		{"\xed\xa0\x80", `\ufffd\ufffd\ufffd`},           // a surrogate's encoding
		{"\xf4\x90\x80\x80", `\ufffd\ufffd\ufffd\ufffd`}, // above U+10FFFF
	}
	for _, tt := range tests {
		got := AppendJSONEscaped([]byte("x"), tt.in)
		if string(got) != "x"+tt.want {
			t.Errorf("AppendJSONEscaped(%q) = %q, want %q", tt.in, got[1:], tt.want)
		}
		if b := AppendJSONEscaped(nil, []byte(tt.in)); string(b) != tt.want {
			t.Errorf("AppendJSONEscaped([]byte(%q)) = %q, want %q", tt.in, b, tt.want)
		}
	}
}

// TestAppendJSONEscapedAllocs: with room in dst nothing is allocated,
// for a string or a []byte, ASCII or not.
func TestAppendJSONEscapedAllocs(t *testing.T) {
	s := strings.Repeat("text \"quoted\"\n é 日本 🙂 \u2028 \xff ", 100)
	dst := make([]byte, 0, 4*len(s))
	if n := testing.AllocsPerRun(10, func() { dst = AppendJSONEscaped(dst[:0], s) }); n != 0 {
		t.Errorf("string: %v allocations", n)
	}
	b := []byte(s)
	if n := testing.AllocsPerRun(10, func() { dst = AppendJSONEscaped(dst[:0], b) }); n != 0 {
		t.Errorf("[]byte: %v allocations", n)
	}
}

// FuzzAppendJSONEscaped: the escape is encoding/json's (HTML escaping off)
// to the byte, decodes back to valid UTF-8 input, is the same for a
// string and a []byte, and joins from pieces cut before any character.
// Its seeds run with every go test.
func FuzzAppendJSONEscaped(f *testing.F) {
	for _, s := range []string{"", "plain", `"\`, "\x00\b\f\n\r\t\x1f\x7f", "<>&", "é日🙂", "\u2028\u2029",
		"\xff\xfe", "\xe2\x82", "\xe2\x82\xac\xac", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "a\xf0\x9f\x99\x82\x80b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendJSONEscaped(nil, s)
		var enc bytes.Buffer
		e := json.NewEncoder(&enc)
		e.SetEscapeHTML(false)
		if err := e.Encode(s); err != nil {
			t.Fatal(err)
		}
		if want := enc.Bytes()[1 : enc.Len()-2]; !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q, encoding/json %q", s, got, want)
		}
		if b := AppendJSONEscaped(nil, []byte(s)); !bytes.Equal(b, got) {
			t.Fatalf("%q: []byte %q, string %q", s, b, got)
		}
		if utf8.ValidString(s) {
			var back string
			if err := json.Unmarshal([]byte(`"`+string(got)+`"`), &back); err != nil || back != s {
				t.Fatalf("%q: %q decodes to %q, %v", s, got, back, err)
			}
		}
		for i := range len(s) {
			if !utf8.RuneStart(s[i]) {
				continue
			}
			if joined := AppendJSONEscaped(AppendJSONEscaped(nil, s[:i]), s[i:]); !bytes.Equal(joined, got) {
				t.Fatalf("%q cut at %d: %q, whole %q", s, i, joined, got)
			}
		}
	})
}

func BenchmarkAppendJSONEscaped(b *testing.B) {
	for _, bench := range []struct{ name, s string }{
		{"ascii", strings.Repeat(`{"name":"entry-000000.txt","path":"list/entry-000000.txt","size_bytes":2},`, 10000)},
		{"text", strings.Repeat("a line of text,\tindented\n", 30000)},
		{"utf8", strings.Repeat("é 日本語のテキスト 🙂\n", 30000)},
	} {
		b.Run(bench.name, func(b *testing.B) {
			dst := make([]byte, 0, 2*len(bench.s))
			b.SetBytes(int64(len(bench.s)))
			for b.Loop() {
				dst = AppendJSONEscaped(dst[:0], bench.s)
			}
		})
	}
}

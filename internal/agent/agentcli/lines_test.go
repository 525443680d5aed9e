package agentcli

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 300<<10) // far over bufio.Scanner's 64 KiB
	tests := []struct {
		name string
		in   string
		max  int
		want []string // "!" marks ErrLineTooLong
	}{
		{"plain", "a\nb\n", 0, []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", 0, []string{"a", "b"}},
		{"no final newline", "a\nb", 0, []string{"a", "b"}},
		{"empty lines", "\n\na\n", 0, []string{"", "", "a"}},
		{"long line", long + "\nz\n", 0, []string{long, "z"}},
		{"over the limit", "ok\n" + long + "\nafter\n", 1 << 10, []string{"ok", "!", "after"}},
		{"exactly the limit", strings.Repeat("y", 1024) + "\n", 1024, []string{strings.Repeat("y", 1024)}},
		{"over the limit at EOF", "ok\n" + long, 1 << 10, []string{"ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := NewLineReader(strings.NewReader(tt.in), tt.max)
			var got []string
			for {
				b, err := lr.Next()
				if errors.Is(err, ErrLineTooLong) {
					got = append(got, "!")
					continue
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(b))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d lines, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("line %d: %.40q, want %.40q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func BenchmarkLineReader(b *testing.B) {
	line := strings.Repeat("{\"type\":\"delta\",\"text\":\"abc\"}", 100) + "\n"
	in := strings.Repeat(line, 1000)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		lr := NewLineReader(strings.NewReader(in), 0)
		for {
			if _, err := lr.Next(); err != nil {
				break
			}
		}
	}
}

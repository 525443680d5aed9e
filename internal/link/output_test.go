package link

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFitOutput(t *testing.T) {
	note := truncatedNote + "\n"
	lines := strings.Repeat("abcdefghi\n", 10) // 100 bytes, 10 lines
	for _, tt := range []struct {
		name           string
		stdout, stderr string
		lost           bool
		budget         int64
		capture        string
		wantOut        string
		wantErr        string
		wantTruncated  bool
	}{
		{"below the budget", "out\n", "err\n", false, 100, "", "out\n", "err\n", false},
		{"at the budget", lines, "", false, 100, "", lines, "", false},
		{"one past: cut after the last whole line", lines + "x", "", false, 100, "",
			lines[:len(lines)-10*((len(note)+1+9)/10)], note, true},
		{"stdout first, then stderr", "o\n", "e1\ne2\n" + strings.Repeat("z", 200), false, 60, "",
			"o\n", "e1\ne2\n" + note, true},
		{"lost output is marked even when the rest fits", "a\n", "", true, 100, "", "a\n", note, true},
		{"the marker points to the capture", "a\n", "", true, 200, "cap_1", "a\n",
			truncatedNote + " (the whole output: read_command_output of capture cap_1)\n", true},
		{"a line longer than the budget is cut at a character", strings.Repeat("é", 100), "", false, 60, "",
			strings.Repeat("é", (60-len(note)-1)/2), note, true},
		{"a multi-byte character at the cut", "a" + strings.Repeat("€", 50), "", false, 40, "",
			"a" + strings.Repeat("€", (40-len(note)-1-1)/3), note, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, tr := fitOutput(tt.stdout, tt.stderr, tt.lost, tt.budget, tt.capture)
			if out != tt.wantOut || errs != tt.wantErr || tr != tt.wantTruncated {
				t.Fatalf("got %q, %q, %v\nwant %q, %q, %v", out, errs, tr, tt.wantOut, tt.wantErr, tt.wantTruncated)
			}
			if int64(len(out)+len(errs)) > tt.budget {
				t.Fatalf("%d bytes, past the budget of %d", len(out)+len(errs), tt.budget)
			}
			if !utf8.ValidString(out) || !utf8.ValidString(errs) {
				t.Fatal("cut inside a character")
			}
		})
	}
}

package procs

import (
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
)

// hardArgs are arguments that each shell's quoting must carry unchanged.
var hardArgs = []string{
	"plain", "with space", "", `"double"`, "'single'", `it's`, `a"b'c`,
	"%PATH%", "%", "100%", "^", "a^b^^", "$HOME", "${x}", "`date`", "$(id)",
	`back\slash`, `trailing\`, `trailing\\`, `\"`, `\\"x`, "tab\there", "\t",
	"ünïcødé", "日本語", "emoji 😀", "a&b|c<d>e", "(paren)", "!bang!", "semi;colon",
	"*", "?", "~", "#hash", "=eq", "--flag=x y",
	"%%", "a %", "% a", `\%`, `x\%\`, `"%"`, "%a b%c%%d", "%OS%",
}

func TestQuotePOSIXForm(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"ls", "-la", "/tmp"}, "ls -la /tmp"},
		{[]string{""}, "''"},
		{[]string{"a b"}, "'a b'"},
		{[]string{"it's"}, `'it'\''s'`},
		{[]string{"$HOME"}, `'$HOME'`},
		{[]string{"=eq", "%1", "a=b", "50%"}, `'=eq' '%1' a=b 50%`},
	}
	for _, tt := range tests {
		if got := QuotePOSIX(tt.in); got != tt.want {
			t.Errorf("QuotePOSIX(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestQuoteWindowsParse checks QuoteWindows against a transcription of
// CommandLineToArgvW's rules, on every OS.
func TestQuoteWindowsParse(t *testing.T) {
	args := append([]string{`C:\prog.exe`}, hardArgs...)
	args = append(args, "new\nline")
	line := QuoteWindows(args)
	if got := commandLineToArgv(line); !slices.Equal(got, args) {
		t.Errorf("QuoteWindows round trip:\n got %q\nwant %q\nline %s", got, args, line)
	}
	for in, want := range map[string]string{"a": "a", "": `""`, "a b": `"a b"`, `a\`: `a\`, `a b\`: `"a b\\"`, `a"b`: `"a\"b"`} {
		if got := quoteWindowsArg(in); got != want {
			t.Errorf("quoteWindowsArg(%q) = %s, want %s", in, got, want)
		}
	}
}

// commandLineToArgv splits a command line as CommandLineToArgvW does (the
// post-2008 rules, which Go's os.Args on Windows follows too).
func commandLineToArgv(s string) []string {
	var args []string
	// The program name: quotes toggle, no escapes.
	var b strings.Builder
	inQuote := false
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			inQuote = !inQuote
			continue
		}
		if !inQuote && (c == ' ' || c == '\t') {
			break
		}
		b.WriteByte(c)
	}
	args = append(args, b.String())
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return args
		}
		b.Reset()
		inQuote = false
	arg:
		for i < len(s) {
			switch c := s[i]; {
			case c == '\\':
				n := 0
				for ; i < len(s) && s[i] == '\\'; i++ {
					n++
				}
				if i < len(s) && s[i] == '"' {
					b.WriteString(strings.Repeat(`\`, n/2))
					if n%2 == 1 {
						b.WriteByte('"')
						i++
					}
				} else {
					b.WriteString(strings.Repeat(`\`, n))
				}
			case c == '"':
				if inQuote && i+1 < len(s) && s[i+1] == '"' {
					b.WriteByte('"') // "" inside quotes
					i += 2
				} else {
					inQuote = !inQuote
					i++
				}
			case !inQuote && (c == ' ' || c == '\t'):
				break arg
			default:
				b.WriteByte(c)
				i++
			}
		}
		args = append(args, b.String())
	}
}

// TestQuoteThroughShells runs this test binary through each installed
// shell with the quoted line and compares the argv it prints.
func TestQuoteThroughShells(t *testing.T) {
	type shellCase struct {
		shell string
		quote func([]string) string
		args  []string
	}
	var cases []shellCase
	if runtime.GOOS == "windows" {
		// cmd.exe ends a command at a line break, so none may be in args.
		cases = append(cases, shellCase{"cmd", QuoteCmd, hardArgs})
	} else {
		posix := append(slices.Clone(hardArgs), "new\nline", "cr\rx")
		cases = append(cases, shellCase{"sh", QuotePOSIX, posix}, shellCase{"bash", QuotePOSIX, posix}, shellCase{"zsh", QuotePOSIX, posix})
	}
	for _, c := range cases {
		t.Run(c.shell, func(t *testing.T) {
			if _, err := ResolveShell(c.shell); err != nil {
				tstest.Missing(t, c.shell+" is not installed (.ci/run installs it)")
			}
			line := c.quote(append([]string{self(t)}, c.args...))
			out, errOut, st := run(t, Spec{Command: line, Shell: c.shell}, "argv")
			var got []string
			if err := json.Unmarshal([]byte(out), &got); err != nil || st.ExitCode != 0 {
				t.Fatalf("exit %d, output %q, stderr %q: %v\nline: %s", st.ExitCode, out, errOut, err, line)
			}
			for i := range max(len(got), len(c.args)) {
				var g, w string
				if i < len(got) {
					g = got[i]
				}
				if i < len(c.args) {
					w = c.args[i]
				}
				if g != w {
					t.Errorf("arg %d: got %q, want %q", i, g, w)
				}
			}
			if len(got) != len(c.args) {
				t.Errorf("got %d args, want %d\nline: %s", len(got), len(c.args), line)
			}
		})
	}
}

// TestQuoteCmdParse checks QuoteCmd on every OS by undoing cmd.exe's
// caret escapes and splitting the rest as CommandLineToArgvW does.
func TestQuoteCmdParse(t *testing.T) {
	args := append([]string{`C:\prog.exe`}, hardArgs...)
	line := QuoteCmd(args)
	var un strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] == '^' {
			i++
		}
		un.WriteByte(line[i])
	}
	if got := commandLineToArgv(un.String()); !slices.Equal(got, args) {
		t.Errorf("QuoteCmd round trip:\n got %q\nwant %q\nline %s", got, args, line)
	}
}

func TestLineFor(t *testing.T) {
	argv := []string{"prog", "a b", "it's", "$HOME", "%OS%"}
	tests := []struct{ shell, want string }{
		{"sh", `prog 'a b' 'it'\''s' '$HOME' '%OS%'`},
		{"bash", `prog 'a b' 'it'\''s' '$HOME' '%OS%'`},
		{"zsh", `prog 'a b' 'it'\''s' '$HOME' '%OS%'`},
		{"cmd", QuoteCmd(argv)},
		{"powershell", `& 'prog' 'a b' 'it''s' '$HOME' '%OS%'`},
		{"pwsh", `& 'prog' 'a b' 'it''s' '$HOME' '%OS%'`},
	}
	for _, tt := range tests {
		if got := lineFor(tt.shell, argv); got != tt.want {
			t.Errorf("lineFor(%s) = %s, want %s", tt.shell, got, tt.want)
		}
	}
}

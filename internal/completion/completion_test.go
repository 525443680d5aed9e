package completion

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/hostlink/hostlink/internal/tstest"
)

// grammar exercises what the scripts must handle: nested commands, a
// global flag with a value, short flags, enums, paths, hidden entries and
// help text with quotes.
type grammar struct {
	Config  string `help:"Config file, it's \"quoted\"." type:"path"`
	Verbose bool   `short:"v" help:"Say more."`

	Serve struct {
		Listen string `help:"Address."`
		Mode   string `enum:"fast,safe" default:"safe" help:"Mode."`
	} `cmd:"" help:"Run the daemon."`
	Audit struct {
		Tail struct {
			N int `short:"n" help:"Lines."`
		} `cmd:"" help:"Show the last records."`
		Verify struct{} `cmd:"" help:"Check the chain."`
	} `cmd:"" help:"Inspect the audit log."`
	Open struct {
		File string `arg:"" type:"path" help:"A file."`
	} `cmd:"" help:"Open a file."`
	Completion struct {
		Shell string `arg:"" enum:"bash,zsh" help:"Shell."`
	} `cmd:"" help:"Print a script."`
	Secret struct{} `cmd:"" hidden:"" help:"Not shown."`
}

func script(t *testing.T, shell string) string {
	t.Helper()
	k, err := kong.New(&grammar{}, kong.Name("tool"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, shell, "tool", k.Model); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "tool."+shell)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// cases are command lines (the cursor at the end) and what must and must
// not be offered.
var cases = []struct {
	line      string
	want, not []string
}{
	{line: "tool ", want: []string{"serve", "audit", "open"}, not: []string{"secret", "--config"}},
	{line: "tool se", want: []string{"serve"}, not: []string{"audit"}},
	{line: "tool -", want: []string{"--config", "--verbose", "--help"}, not: []string{"--listen"}},
	{line: "tool audit ", want: []string{"tail", "verify"}, not: []string{"serve"}},
	{line: "tool --config x.toml audit ", want: []string{"tail", "verify"}},
	{line: "tool -v audit t", want: []string{"tail"}, not: []string{"verify"}},
	{line: "tool audit tail -", want: []string{"-n", "--config"}},
	{line: "tool serve --mode ", want: []string{"fast", "safe"}},
	{line: "tool serve --listen 127.0.0.1:0 --mode s", want: []string{"safe"}, not: []string{"fast"}},
	{line: "tool serve --", want: []string{"--listen", "--mode", "--config"}, not: []string{"-n"}},
	{line: "tool --config ", want: []string{"a-file.toml"}},
	{line: "tool open ", want: []string{"a-file.toml"}},
	{line: "tool completion ", want: []string{"bash", "zsh"}, not: []string{"a-file.toml"}},
}

func check(t *testing.T, line string, got, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%q: %q not offered; got %q", line, w, got)
		}
	}
	for _, n := range not {
		if slices.Contains(got, n) {
			t.Errorf("%q: %q offered; got %q", line, n, got)
		}
	}
}

// completionDir holds one file for the file-name cases.
func completionDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a-file.toml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBash(t *testing.T) {
	bash := tstest.Tool(t, "bash")
	s := script(t, "bash")
	dir := completionDir(t)
	for _, c := range cases {
		// bash splits the line into COMP_WORDS itself when completing;
		// here the words are split at spaces, with an empty last word
		// after a trailing space.
		words := strings.Split(c.line, " ")
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = squote(w)
		}
		prog := "source " + squote(s) + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\n" +
			"COMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_tool\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: bash: %v\n%s", c.line, err, out)
		}
		check(t, c.line, strings.Fields(string(out)), c.want, c.not)
	}
}

func TestFish(t *testing.T) {
	fish := tstest.Tool(t, "fish")
	s := script(t, "fish")
	dir := completionDir(t)
	for _, c := range cases {
		cmd := exec.Command(fish, "--no-config", "-c", "source "+squote(s)+"; complete -C "+squote(c.line))
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: fish: %v\n%s", c.line, err, out)
		}
		var got []string
		for _, l := range strings.Split(string(out), "\n") {
			// Each candidate is printed as "word<TAB>description".
			if w, _, _ := strings.Cut(l, "\t"); w != "" {
				got = append(got, w)
			}
		}
		check(t, c.line, got, c.want, c.not)
	}
}

// TestZsh checks that the zsh script parses and registers itself with
// compinit when sourced. Driving zsh's completion widgets needs a terminal
// (zpty); the table and walker are the same as bash's and fish's above.
func TestZsh(t *testing.T) {
	zsh := tstest.Tool(t, "zsh")
	s := script(t, "zsh")
	if out, err := exec.Command(zsh, "-n", s).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	prog := "autoload -U compinit && compinit -u -D && source " + squote(s) + " && print -r -- ${_comps[tool]}"
	cmd := exec.Command(zsh, "-f", "-c", prog)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "_tool" {
		t.Fatalf("sourcing the zsh script did not register _tool: %v\n%s", err, out)
	}
}

func TestUnknownShell(t *testing.T) {
	k, err := kong.New(&grammar{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(&bytes.Buffer{}, "tcsh", "tool", k.Model); err == nil || !strings.Contains(err.Error(), "bash, zsh, fish") {
		t.Fatalf("Write(tcsh) = %v, want an error naming the shells", err)
	}
}

// TestPowerShell checks the PowerShell script's table: every visible
// command path with its subcommands, flags and flags taking a value, the
// enums of flags and arguments, quotes doubled, nothing hidden. No
// PowerShell runs here (Debian has none), so the walker itself is the same
// as bash's and fish's, which run above.
func TestPowerShell(t *testing.T) {
	b, err := os.ReadFile(script(t, "powershell"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		"Register-ArgumentCompleter -Native -CommandName 'tool', 'tool.exe' -ScriptBlock {\n",
		"        '' = @{ cmds = @('serve', 'audit', 'open', 'completion'); flags = @('--help', '-h', '--config', '--verbose', '-v'); vflags = @('--config') }\n",
		"        ' audit tail' = @{ cmds = @(); flags = @('--help', '-h', '--config', '--verbose', '-v', '--n', '-n'); vflags = @('--config', '--n', '-n') }\n",
		"        ' completion' = @{ cmds = @('bash', 'zsh');",
		"        ' serve|--mode' = @('fast', 'safe')\n",
		`        '|--config' = 'Config file, it''s "quoted".'` + "\n",
		"        '|audit' = 'Inspect the audit log.'\n",
		"[System.Management.Automation.CompletionResult]::new($prefix + $c, $c, 'ParameterValue', $tip)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the script lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "secret") {
		t.Errorf("the script offers a hidden command")
	}
	if psquote("it\u2019s") != "'it\u2019\u2019s'" {
		t.Errorf("psquote does not double a typographic quote: %s", psquote("it\u2019s"))
	}
}

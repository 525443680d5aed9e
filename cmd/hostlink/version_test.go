package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
	"github.com/hostlink/hostlink/internal/version"
)

// TestVersion builds hostlink as a release does (the version, commit and
// date set with -X) and checks `version`, `version --json` and `--version`.
func TestVersion(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "hostlink")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	const pkg = "github.com/hostlink/hostlink/internal/version."
	ldflags := "-X " + pkg + "Version=9.8.7 -X " + pkg + "Commit=0123456789abcdef0123456789abcdef01234567 -X " + pkg + "Date=2026-11-01T12:00:00Z"
	cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	want := version.Info{Version: "9.8.7", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-11-01T12:00:00Z",
		Go: runtime.Version(), Target: runtime.GOOS + "/" + runtime.GOARCH}

	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("version --json: %v", err)
	}
	var got version.Info
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("version --json printed %q: %v", out, err)
	}
	// Modified depends on the clone this test runs in.
	got.Modified = false
	if got != want {
		t.Errorf("version --json = %+v, want %+v", got, want)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("%v: %v (want exit 0)", args, err)
		}
		s := string(out)
		for _, w := range []string{"hostlink 9.8.7\n", want.Commit, want.Date, want.Go, want.Target} {
			if !strings.Contains(s, w) {
				t.Errorf("%v lacks %q:\n%s", args, w, s)
			}
		}
		if n := strings.Count(s, "\n"); n != 5 {
			t.Errorf("%v printed %d lines, want 5:\n%s", args, n, s)
		}
	}
}

// TestCompletionScripts checks the scripts hostlink generates for itself:
// bash completes its real commands and flags; zsh parses.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	bash := tstest.Tool(t, "bash")
	bin := build(t)
	dir := t.TempDir()
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, err := exec.Command(bin, "completion", sh).Output()
		if err != nil {
			t.Fatalf("completion %s: %v", sh, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "hostlink."+sh), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for line, want := range map[string]string{
		"hostlink appr":           "approvals",
		"hostlink approvals ":     "approve",
		"hostlink serve --ena":    "--enable-shell",
		"hostlink completion ":    "fish",
		"hostlink completion p":   "powershell",
		"hostlink --config x ver": "version",
		"hostlink upd":            "update",
		"hostlink update --allow": "--allow-downgrade",
	} {
		// The words as bash splits them, with an empty last word after
		// a trailing space.
		words := strings.Split(line, " ")
		for i, w := range words {
			words[i] = "'" + w + "'"
		}
		prog := "source " + filepath.Join(dir, "hostlink.bash") + "; COMP_WORDS=(" + strings.Join(words, " ") + ")\n" +
			"COMP_CWORD=" + strconv.Itoa(len(words)-1) + "; _hostlink; printf '%s\\n' \"${COMPREPLY[@]}\""
		out, err := exec.Command(bash, "--norc", "-c", prog).CombinedOutput()
		if err != nil || !strings.Contains("\n"+string(out), "\n"+want+"\n") {
			t.Errorf("bash completion of %q: %v, want %q among:\n%s", line, err, want, out)
		}
	}
	if zsh, err := exec.LookPath("zsh"); err == nil {
		if out, err := exec.Command(zsh, "-n", filepath.Join(dir, "hostlink.zsh")).CombinedOutput(); err != nil {
			t.Errorf("zsh -n: %v\n%s", err, out)
		}
	}
	// manpage is for the release's packaging: hidden, so not offered.
	if b, _ := os.ReadFile(filepath.Join(dir, "hostlink.bash")); strings.Contains(string(b), "manpage") {
		t.Error("the completions offer the hidden manpage command")
	}
}

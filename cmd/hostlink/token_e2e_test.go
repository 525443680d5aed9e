package main

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tokenOf runs `hostlink token` in env and returns the token it prints on
// stdout (stderr names the instance).
func tokenOf(t *testing.T, env []string, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "token")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hostlink token: %v %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// stateDir is env's state directory, as `hostlink info` reports it.
func stateDir(t *testing.T, env []string, bin string) string {
	t.Helper()
	out, err := run(t, env, bin, "info", "--json")
	if err != nil {
		t.Fatalf("info: %v %s", err, out)
	}
	var info struct {
		Dirs struct {
			State string `json:"state"`
		} `json:"dirs"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.Dirs.State == "" {
		t.Fatalf("info --json: %v %s", err, out)
	}
	return info.Dirs.State
}

// TestTokenNamesItsInstance: `hostlink token` refuses, with NO_INSTANCE
// naming --create and the state directory, to mint a token where no daemon
// has run; --create makes one; with a daemon running it prints the
// daemon's token and names the state directory, as the console's login
// page does.
func TestTokenNamesItsInstance(t *testing.T) {
	t.Parallel()
	bin := build(t)

	_, env := defaultEnv(t)
	state := stateDir(t, env, bin)
	out, err := run(t, env, bin, "token")
	for _, want := range []string{"NO_INSTANCE", "--create", state} {
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("token with no instance: %v, %q does not say %s", err, out, want)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "http.token")); !os.IsNotExist(err) {
		t.Fatalf("a refused token was written: %v", err)
	}
	cmd := exec.Command(bin, "token", "--create")
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	created, err := cmd.Output()
	if err != nil || len(strings.TrimSpace(string(created))) < 32 || !strings.Contains(stderr.String(), state) {
		t.Fatalf("token --create: %v %q, stderr %q", err, created, stderr.String())
	}
	if got := tokenOf(t, env, bin); got != strings.TrimSpace(string(created)) {
		t.Fatalf("token after --create = %q, want %q", got, created)
	}

	// A daemon makes its token itself: `hostlink token` finds it.
	_, env = defaultEnv(t)
	state = stateDir(t, env, bin)
	_, url := startServe(t, bin, env)
	if tok := tokenOf(t, env, bin); len(tok) < 32 {
		t.Fatalf("token with a daemon running: %q", tok)
	}
	resp, err := http.Get(strings.TrimSuffix(url, "mcp") + "console/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(html.UnescapeString(string(page)), state) {
		t.Fatalf("the login page does not name the state directory %s:\n%s", state, page)
	}
}

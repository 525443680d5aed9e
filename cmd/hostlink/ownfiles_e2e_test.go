package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
)

// TestOwnFilesInHomeWorkdir is finding 5 of issue #37 with the real
// program: installed as install.sh installs it (~/.local/bin/hostlink),
// its unit written by `hostlink install`, and the home directory a
// workdir, write_file, move with overwrite, edit_file and a sandboxed
// command each replaced the program or edited the unit. Now each is
// refused and both stay as they were, while reading them works.
func TestOwnFilesInHomeWorkdir(t *testing.T) {
	built := build(t)
	home, _ := filepath.EvalSymlinks(t.TempDir())
	prog := filepath.Join(home, ".local", "bin", filepath.Base(built))
	os.MkdirAll(filepath.Dir(prog), 0o755)
	data, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, data, 0o755); err != nil {
		t.Fatal(err)
	}
	hl := filepath.Join(home, ".hostlink")
	cfg := ephemeralListen + allowPolicy + "\n[commands]\nenabled = true\n\n[[workdirs]]\nalias = \"home\"\npath = '" + home + "'\n"
	os.MkdirAll(filepath.Join(hl, "config"), 0o700)
	os.WriteFile(filepath.Join(hl, "config", "config.toml"), []byte(cfg), 0o600)
	os.MkdirAll(filepath.Join(home, "tmp"), 0o700)
	env := append(os.Environ(), "HOSTLINK_HOME="+hl, "HOME="+home, "USERPROFILE="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		// `hostlink install` refuses a program in the temporary directory.
		"TMPDIR="+filepath.Join(home, "tmp"), "TMP="+filepath.Join(home, "tmp"), "TEMP="+filepath.Join(home, "tmp"))
	out, err := run(t, env, prog, "install", "--json")
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	var installed struct{ Path string }
	if err := json.Unmarshal([]byte(out), &installed); err != nil {
		t.Fatal(err)
	}
	unit, _ := filepath.Rel(home, installed.Path)
	unit = filepath.ToSlash(unit)
	unitBefore, err := os.ReadFile(installed.Path)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = startServe(t, prog, env)
	os.WriteFile(filepath.Join(home, "evil"), []byte("EVIL"), 0o755)

	progRel := ".local/bin/" + filepath.Base(prog)
	cases := []struct{ op, args string }{
		{"write_file", `{"path":"` + progRel + `","content":"EVIL"}`},
		{"move", `{"src":"evil","dst":"` + progRel + `","overwrite":true}`},
		{"move", `{"src":".local/bin","dst":"oldbin"}`},
		{"edit_file", `{"path":"` + unit + `","edits":[{"old_text":"serve","new_text":"serve --evil"}]}`},
		{"write_file", `{"path":"` + unit + `","content":"EVIL"}`},
	}
	if runtime.GOOS == "linux" {
		// What the unit starts in: the next start would read its
		// configuration from a directory the agent chose.
		for _, p := range []string{".config/environment.d/50-evil.conf", ".config/systemd/user/service.d/evil.conf",
			".config/systemd/user.conf", ".config/systemd/user.conf.d/evil.conf"} {
			cases = append(cases, struct{ op, args string }{"write_file",
				`{"path":"` + p + `","content":"HOSTLINK_HOME=/tmp/evil\n","create_parents":true}`})
		}
	}
	for _, c := range cases {
		out, err := run(t, env, built, "call", c.op, c.args)
		if err == nil || !(strings.Contains(out, "READ_ONLY") || strings.Contains(out, "PATH_OUTSIDE_ALLOWED_ROOT")) {
			t.Errorf("%s %s: %v %s, want it refused", c.op, c.args, err, out)
		}
	}
	if out, err := run(t, env, built, "call", "read_file", `{"path":"`+unit+`"}`); err != nil || !strings.Contains(out, "serve") {
		t.Errorf("read_file of the unit: %v %s", err, out)
	}

	if runtime.GOOS == "windows" {
		// The Windows sandbox does not guard files inside the workdir
		// (README's sandbox table); the file operations above do.
		return
	}
	out, err = run(t, env, built, "call", "list_workdirs", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"command_sandbox": "workdir`) && !strings.Contains(out, `"command_sandbox":"workdir`) {
		tstest.Missing(t, "commands cannot be sandboxed here: "+out)
	}
	command := "echo EVIL > '" + progRel + "'; echo Evil >> '" + unit + "'; mv .local/bin oldbin"
	if out, err := run(t, env, built, "call", "run_command", `{"command":`+jsonString(command)+`}`); err != nil {
		t.Fatalf("run_command: %v %s", err, out)
	}
	if b, _ := os.ReadFile(prog); string(b) != string(data) {
		t.Error("the program was changed")
	}
	if b, _ := os.ReadFile(installed.Path); string(b) != string(unitBefore) {
		t.Errorf("the unit is now %q", b)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

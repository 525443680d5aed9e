package agentcli

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

var testProgram = Program{
	Command: "hostlink-test-agent",
	Package: "@test/agent",
	Binaries: func(goos, goarch string) []PackageFile {
		exe := "agent"
		if goos == "windows" {
			exe += ".exe"
		}
		return []PackageFile{{Package: "@test/agent-" + NodeOS(goos) + "-" + NodeArch(goarch), Path: "bin/" + exe}}
	},
}

func touch(t *testing.T, path string) string {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// npmLayout makes node_modules with the package and its platform binary
// for goos/goarch under dir, as npm installs them.
func npmLayout(t *testing.T, dir, goos, goarch string) (nm, bin string) {
	nm = filepath.Join(dir, "node_modules")
	touch(t, filepath.Join(nm, "@test", "agent", "package.json"))
	touch(t, filepath.Join(nm, "@test", "agent", "bin", "launcher.js"))
	f := testProgram.Binaries(goos, goarch)[0]
	bin = touch(t, filepath.Join(nm, filepath.FromSlash(f.Package), filepath.FromSlash(f.Path)))
	return nm, bin
}

func TestFind(t *testing.T) {
	goos, goarch := runtime.GOOS, runtime.GOARCH
	base := t.TempDir()
	nm, bin := npmLayout(t, filepath.Join(base, "proj"), goos, goarch)
	plain := touch(t, filepath.Join(base, "plain", "agent"))
	tests := []struct {
		name, configured string
		want             string
	}{
		{"node_modules directory", nm, bin},
		{"npm prefix", filepath.Dir(nm), bin},
		{"package directory", filepath.Join(nm, "@test", "agent"), bin},
		{"launcher inside the package", filepath.Join(nm, "@test", "agent", "bin", "launcher.js"), bin},
		{"plain executable", plain, plain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := find(testProgram, tt.configured, goos, goarch)
			if err != nil || !slices.Equal(got, []string{tt.want}) {
				t.Fatalf("find(%s) = %v, %v; want %s", tt.configured, got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{filepath.Join(base, "nothing"), t.TempDir()} {
		if got, err := find(testProgram, bad, goos, goarch); err == nil {
			t.Errorf("find(%s) = %v, want not installed", bad, got)
		}
	}
	// A package without its platform package (an install for another OS).
	other := filepath.Join(base, "other", "node_modules")
	touch(t, filepath.Join(other, "@test", "agent", "package.json"))
	if got, err := find(testProgram, other, goos, goarch); err == nil {
		t.Errorf("find without the platform package = %v", got)
	}
}

// TestFindWindowsShim: npm on Windows puts agent.cmd next to node_modules;
// the platform .exe in the package is what runs.
func TestFindWindowsShim(t *testing.T) {
	dir := t.TempDir()
	_, bin := npmLayout(t, dir, "windows", "amd64")
	shim := touch(t, filepath.Join(dir, "hostlink-test-agent.cmd"))
	got, err := find(testProgram, shim, "windows", "amd64")
	if err != nil || !slices.Equal(got, []string{bin}) {
		t.Fatalf("find(%s) = %v, %v; want %s", shim, got, err, bin)
	}
	lone := touch(t, filepath.Join(t.TempDir(), "hostlink-test-agent.cmd"))
	if got, err := find(testProgram, lone, "windows", "amd64"); err == nil {
		t.Fatalf("a shim without its package: %v", got)
	}
}

// TestFindOnPath: a command on PATH that is npm's symlink into the package
// resolves to the platform binary.
func TestFindOnPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("npm links commands with .cmd shims on Windows (TestFindWindowsShim)")
	}
	dir := t.TempDir()
	nm, bin := npmLayout(t, dir, runtime.GOOS, runtime.GOARCH)
	binDir := filepath.Join(nm, ".bin")
	os.MkdirAll(binDir, 0o755)
	if err := os.Symlink(filepath.Join("..", "@test", "agent", "bin", "launcher.js"), filepath.Join(binDir, "hostlink-test-agent")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", binDir)
	got, err := Find(testProgram, "")
	if err != nil || !slices.Equal(got, []string{bin}) {
		t.Fatalf("Find = %v, %v; want %s", got, err, bin)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := Find(testProgram, ""); err == nil {
		t.Fatal("found a command not on PATH")
	}
}

func TestScript(t *testing.T) {
	p := Program{Command: "q", Package: "@test/q", Script: "bundle/q.js"}
	dir := t.TempDir()
	touch(t, filepath.Join(dir, "node_modules", "@test", "q", "package.json"))
	script := touch(t, filepath.Join(dir, "node_modules", "@test", "q", "bundle", "q.js"))
	got, err := find(p, filepath.Join(dir, "node_modules"), runtime.GOOS, runtime.GOARCH)
	if _, lookErr := execLookPath("node"); lookErr != nil {
		if err == nil {
			t.Fatalf("found %v without node", got)
		}
		return
	}
	if err != nil || len(got) != 2 || got[1] != script {
		t.Fatalf("find = %v, %v", got, err)
	}
}

func TestPassthrough(t *testing.T) {
	t.Setenv("HOSTLINK_PT_ONE", "1")
	t.Setenv("HOSTLINK_PTX_TWO", "2")
	t.Setenv("OTHER_SECRET", "s")
	got := Passthrough([]string{"HOSTLINK_PT_ONE", "HOSTLINK_PTX_*"}, map[string]string{"EXTRA": "e", "HOSTLINK_PT_ONE": "over"})
	want := map[string]string{"HOSTLINK_PT_ONE": "over", "HOSTLINK_PTX_TWO": "2", "EXTRA": "e"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

package logging

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// notTerminal is a stderr that is a plain file.
func notTerminal(t *testing.T) *os.File {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func noenv(string) string { return "" }

func TestFileLogLevelsAndRedaction(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	l, err := Open(Options{Dir: dir, Level: "info", Getenv: noenv, Stderr: notTerminal(t)})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "tok-5f2a9c0e7d"
	l.Debug("hidden at info")
	l.Info("paired", "platform", "https://p.example", "access_token", secret, "header", "Bearer "+secret)
	l.With("refresh_token", secret).Warn("refresh failed", "attempt", 1)
	l.Close()
	if l.Where != filepath.Join(dir, FileName) {
		t.Fatalf("where %q", l.Where)
	}
	b, err := os.ReadFile(l.Where)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) {
		t.Fatalf("the log holds the secret:\n%s", b)
	}
	if strings.Contains(string(b), "hidden at info") {
		t.Fatal("a debug record was written at level info")
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	n := 0
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d records, want 2:\n%s", n, b)
	}
	if fi, _ := os.Stat(dir); fi == nil || !fi.IsDir() {
		t.Fatal("no log dir")
	}
}

func TestBadLevel(t *testing.T) {
	if _, err := Open(Options{Dir: t.TempDir(), Level: "loud", Getenv: noenv}); err == nil {
		t.Fatal("accepted level loud")
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Options{Dir: dir, Level: "debug", MaxFileBytes: 2048, Keep: 3, Getenv: noenv, Stderr: notTerminal(t)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		l.Info("line", "i", i, "pad", strings.Repeat("x", 50))
	}
	l.Close()
	for _, name := range []string{FileName, FileName + ".1", FileName + ".2", FileName + ".3"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi.Size() > 2048 {
			t.Errorf("%s is %d bytes, over the 2048 limit", name, fi.Size())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+".4")); !os.IsNotExist(err) {
		t.Fatalf("kept more than 3 old files: %v", err)
	}
	// Reopening appends to the current file.
	l, _ = Open(Options{Dir: dir, Level: "info", MaxFileBytes: 1 << 20, Getenv: noenv, Stderr: notTerminal(t)})
	before, _ := os.Stat(filepath.Join(dir, FileName))
	l.Info("again")
	l.Close()
	after, _ := os.Stat(filepath.Join(dir, FileName))
	if after.Size() <= before.Size() {
		t.Fatal("reopen did not append")
	}
}

func TestPriority(t *testing.T) {
	for _, tc := range []struct {
		level string
		want  int
	}{{"debug", 7}, {"info", 6}, {"warn", 4}, {"error", 3}} {
		l, _ := ParseLevel(tc.level)
		if got := priority(l); got != tc.want {
			t.Errorf("%s: %d", tc.level, got)
		}
	}
}

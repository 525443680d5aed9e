//go:build unix

package logging

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestJournalStream(t *testing.T) {
	stderr := notTerminal(t)
	fi, _ := stderr.Stat()
	st := fi.Sys().(*syscall.Stat_t)
	stream := fmt.Sprintf("%d:%d", uint64(st.Dev), uint64(st.Ino))
	dir := t.TempDir()

	// Another stream's id (an inherited variable): the file log.
	l, err := Open(Options{Dir: dir, Level: "info", Stderr: stderr, Getenv: func(string) string { return "1:2" }})
	if err != nil || l.Where == "journal" {
		t.Fatalf("where %q %v", l.Where, err)
	}
	l.Close()

	l, err = Open(Options{Dir: filepath.Join(dir, "unused"), Level: "debug", Stderr: stderr, Getenv: func(k string) string {
		if k == "JOURNAL_STREAM" {
			return stream
		}
		return ""
	}})
	if err != nil || l.Where != "journal" {
		t.Fatalf("where %q %v", l.Where, err)
	}
	l.Info("started", "addr", "127.0.0.1:7717")
	l.With("component", "link").Error("refresh failed", "token", "s3cr3t")
	l.Debug("detail")
	b, _ := os.ReadFile(stderr.Name())
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{`<6>msg=started addr=127.0.0.1:7717`, `<3>msg="refresh failed" component=link token=[redacted]`, `<7>msg=detail`}
	if len(lines) != len(want) {
		t.Fatalf("lines %q", lines)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, lines[i], want[i])
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "unused")); !os.IsNotExist(err) {
		t.Fatal("journal mode created a log directory")
	}
}

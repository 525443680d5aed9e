package tstest

import (
	"os"
	"runtime"
	"testing"
)

// Symlink makes a symbolic link for a test that needs one on every OS, and
// reports whether it could. Windows
// refuses symlinks without a privilege or developer mode, and Wine has
// neither symlinks nor junctions, so there the link cases are skipped with
// a log line; on Unix a failure fails the test.
func Symlink(t testing.TB, target, link string) bool {
	t.Helper()
	err := os.Symlink(target, link)
	if err == nil {
		return true
	}
	if runtime.GOOS == "windows" {
		t.Logf("no symlink on this Windows (%v); link cases skipped", err)
		return false
	}
	t.Fatalf("symlink: %v", err)
	return false
}

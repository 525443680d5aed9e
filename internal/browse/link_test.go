package browse

import (
	"os"
	"runtime"
	"testing"
)

// symlink makes a symbolic link and reports whether it could. Windows
// refuses symlinks without a privilege or developer mode, and Wine has
// neither symlinks nor junctions; there the reparse-point decision is
// covered by rootgrant's TestIsLinkAttributes. On Unix a failure fails the
// test.
func symlink(t *testing.T, target, link string) bool {
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

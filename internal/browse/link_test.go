package browse

import (
	"testing"

	"github.com/hostlink/hostlink/internal/linktest"
)

// symlink is linktest.Symlink; on Windows the reparse-point decision is
// covered by rootgrant's TestIsLinkAttributes instead.
func symlink(t *testing.T, target, link string) bool { return linktest.Symlink(t, target, link) }

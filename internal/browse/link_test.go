package browse

import (
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
)

// symlink is tstest.Symlink; on Windows the reparse-point decision is
// covered by rootgrant's TestIsLinkAttributes instead.
func symlink(t *testing.T, target, link string) bool { return tstest.Symlink(t, target, link) }

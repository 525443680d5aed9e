package update

import (
	"os"
	"strings"
)

// oldSuffix names the binary an update moved aside: a running executable
// cannot be replaced on Windows, only renamed.
const oldSuffix = ".old"

// removeOld removes what an earlier update moved aside, once nothing runs
// it any more (while something does, Windows refuses and it stays).
func removeOld(exe string) {
	if !strings.HasSuffix(exe, oldSuffix) {
		os.Remove(exe + oldSuffix)
	}
}

// replace puts next at exe. Windows refuses to replace a running
// executable but lets it be renamed: exe moves aside to exe.old (removed
// by the next update once nothing runs it), then next takes its name. If
// that second rename fails, exe moves back.
func replace(next, exe string) error {
	old := exe + oldSuffix
	os.Remove(old)
	if err := os.Rename(exe, old); err != nil {
		return err
	}
	if err := os.Rename(next, exe); err != nil {
		if err2 := os.Rename(old, exe); err2 != nil {
			return err2
		}
		return err
	}
	return nil
}

package update

import "os"

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

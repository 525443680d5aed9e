// Package private creates and checks files and directories that only the
// current user may read or write.
//
// hostlink keeps its audit log, audit key and other state in such files.
// "Private" means mode 0600 (files) or 0700 (directories) on Unix, and on
// Windows a protected DACL that grants access to the current user and
// SYSTEM only. Check accepts a little more than this package creates: on
// Windows the Administrators group may also have access, since every file
// under a user profile grants it by default and an administrator can take
// any file anyway.
package private

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
)

// ErrNotPrivate is wrapped by Check's error when others may read or write
// the path.
var ErrNotPrivate = errors.New("accessible by other users")

// WriteFile atomically replaces name with a private file holding data: it
// writes a private temporary file in the same directory, syncs it and
// renames it over name, so readers see either the old or the new content.
func WriteFile(name string, data []byte) (err error) {
	dir, base := filepath.Split(name)
	tmp := filepath.Join(dir, "."+base+".tmp-"+rand.Text())
	f, err := OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

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

// MkdirAll creates dir and any missing parents, and makes dir itself
// private even if it already existed.
//
// On Unix dir gets mode 0700; parents it creates get 0700 too (less
// umask), and existing parents are left alone. An existing dir must be
// the user's own: one owned by another user, or reached through a
// symbolic link another user owns, is refused rather than used or
// changed.
//
// On Windows dir gets a private DACL, replacing whatever DACL it had if it
// already existed. A dir it creates is created with that DACL, so it is
// never briefly open to others. Parents keep the DACL they inherit.
func MkdirAll(dir string) error { return mkdirAll(dir) }

// OpenFile is os.OpenFile for a private file.
//
// On Unix a file it creates gets mode 0600, and an existing file that
// grants group or others any access is changed to 0600 before it is
// returned. It never follows a symbolic link at name (O_NOFOLLOW), and
// refuses what it opened unless it is a regular file owned by the
// effective user: a link or a file planted by someone else is neither
// used nor changed.
//
// On Windows, with os.O_CREATE, a new file is created with the private
// DACL (so it is never briefly open to others) before os.OpenFile opens
// it; an existing file gets its DACL replaced.
func OpenFile(name string, flag int) (*os.File, error) { return openFile(name, flag) }

// Check returns an error wrapping ErrNotPrivate if others may read or
// write path, or own it: an owner can change its permissions at will.
//
// On Unix that is a path (after following symlinks) that grants group or
// others any permission bit, or is owned by a user other than the
// effective user. On Windows it is a path owned by, or whose DACL allows
// access to, anyone but the current user, SYSTEM and Administrators. Deny
// ACEs are ignored, and a missing (NULL) DACL grants everyone everything.
func Check(path string) error { return check(path) }

// OpenShared opens a file for reading such that renaming or removing it
// meanwhile stays possible, as always on Unix. On Windows, os.Open does
// not share delete access, so a reader (an audit verify, a log follower)
// would stop the writer from rotating the file, a rename.
func OpenShared(path string) (*os.File, error) { return openShared(path) }

package jail

import "golang.org/x/sys/unix"

// dirOpenFlags open the directories a walk passes through: O_PATH needs
// only search permission, as the kernel's own lookup does, and can be
// stat'ed and used as the base of the *at calls.
const dirOpenFlags = unix.O_PATH

// renameNoReplaceAt renames without replacing an existing name
// (errNoReplaceUnsupported where the file system cannot).
func renameNoReplaceAt(odir handle, oname string, ndir handle, nname string) error {
	err := ignoringEINTR(func() error { return unix.Renameat2(odir, oname, ndir, nname, unix.RENAME_NOREPLACE) })
	if err == unix.EINVAL || err == unix.ENOSYS || err == unix.ENOTSUP {
		return errNoReplaceUnsupported
	}
	return err
}

package jail

import "golang.org/x/sys/unix"

// dirOpenFlags open the directories a walk passes through.
const dirOpenFlags = unix.O_RDONLY

// renameNoReplaceAt renames without replacing an existing name
// (errNoReplaceUnsupported where the file system cannot); want as for
// removeAt.
func renameNoReplaceAt(odir handle, oname string, ndir handle, nname string, _ *ident) error {
	err := ignoringEINTR(func() error { return unix.RenameatxNp(odir, oname, ndir, nname, unix.RENAME_EXCL) })
	if err == unix.EINVAL || err == unix.ENOTSUP {
		return errNoReplaceUnsupported
	}
	return err
}

// mountOf identifies the file system h is on (macOS has no bind mounts).
func mountOf(h handle) (uint64, error) {
	st, err := statHandle(h, "")
	return st.id.dev, err
}

// openBeneath: macOS has no openat2; the walk always goes one component
// at a time.
func openBeneath(handle, string) (handle, error) { return -1, errNoFastPath }

func parentOf(handle) (handle, error) { return -1, errNoFastPath }

package jail

import "golang.org/x/sys/unix"

// dirOpenFlags open the directories a walk passes through: O_PATH needs
// only search permission, as the kernel's own lookup does, and can be
// stat'ed and used as the base of the *at calls.
const dirOpenFlags = unix.O_PATH

// renameNoReplaceAt renames without replacing an existing name
// (errNoReplaceUnsupported where the file system cannot); want as for
// removeAt.
func renameNoReplaceAt(odir handle, oname string, ndir handle, nname string, _ *ident) error {
	err := ignoringEINTR(func() error { return unix.Renameat2(odir, oname, ndir, nname, unix.RENAME_NOREPLACE) })
	if err == unix.EINVAL || err == unix.ENOSYS || err == unix.ENOTSUP {
		return errNoReplaceUnsupported
	}
	return err
}

// mountOf identifies the mount h is on: a bind mount of a directory of
// the same file system has the same device, so the device alone cannot
// tell that a walk is about to enter one. Kernels before 5.8 have no
// mount ID: there the device is used.
func mountOf(h handle) (uint64, error) {
	var stx unix.Statx_t
	err := ignoringEINTR(func() error {
		return unix.Statx(h, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &stx)
	})
	if err != nil {
		return 0, err
	}
	if stx.Mask&unix.STATX_MNT_ID == 0 {
		return uint64(unix.Mkdev(stx.Dev_major, stx.Dev_minor)), nil
	}
	return stx.Mnt_id, nil
}

// beneathFlags resolve a path the way the jail's walk does (see walk), and
// refuse to cross a mount: openat2 fails with EXDEV instead.
const beneathFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// openBeneath opens the directory rel below dir in one call, as the walk
// would reach it, staying on dir's mount. It is the fast path of walk for
// roots no protected directory lies below (Root.fast).
func openBeneath(dir handle, rel string) (h handle, err error) {
	err = ignoringEINTR(func() error {
		h, err = unix.Openat2(dir, rel, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: beneathFlags,
		})
		if err == unix.EAGAIN {
			return unix.EINTR // a concurrent rename; openat2 asks to retry
		}
		return err
	})
	return h, err
}

// parentOf opens the parent of the directory h (for the check at Open
// that no protected directory lies below the root).
func parentOf(h handle) (handle, error) { return openDirAt(h, "..") }

package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hostlink/hostlink/internal/private"
)

// tryLock takes an exclusive lock on the first byte of f without waiting,
// reporting errWouldBlock if another handle holds it. LockFileEx locks
// belong to the handle, so two Logs in one process exclude each other just
// as two processes do. Closing f releases it.
func tryLock(f *os.File) error {
	err := windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY,
		0, 1, 0, new(windows.Overlapped))
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errWouldBlock
	}
	if err != nil {
		return fmt.Errorf("audit: locking %s: %w", f.Name(), err)
	}
	return nil
}

// waitLock takes an exclusive lock on the first byte of f, waiting as
// long as it takes (f is a synchronous handle, so LockFileEx blocks).
func waitLock(f *os.File) error {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK,
		0, 1, 0, new(windows.Overlapped))
	if err != nil {
		return fmt.Errorf("audit: locking %s: %w", f.Name(), err)
	}
	return nil
}

// unlock releases tryLock's or waitLock's lock.
func unlock(f *os.File) error {
	if err := windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped)); err != nil {
		return fmt.Errorf("audit: unlocking %s: %w", f.Name(), err)
	}
	return nil
}

// appendAccess is what os.OpenFile asks for with O_RDWR|O_APPEND: reading,
// and writing only at the end of the file (FILE_APPEND_DATA without
// FILE_WRITE_DATA), which also allows FlushFileBuffers.
const appendAccess = windows.GENERIC_READ | windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES |
	windows.FILE_WRITE_EA | windows.STANDARD_RIGHTS_WRITE | windows.SYNCHRONIZE

// openAppend opens the log file at path for reading and appending, with
// flag's os.O_CREATE and os.O_EXCL, making it private. Unlike os.OpenFile
// it shares delete access, so that another process can rotate (rename)
// the file while this one has it open, as on Unix.
func openAppend(path string, flag int) (*os.File, error) {
	// private.OpenFile creates the file with a private DACL, or makes an
	// existing file's DACL private; its handle does not share delete
	// access, so it is closed and the file opened again.
	pf, err := private.OpenFile(path, os.O_RDWR|flag&(os.O_CREATE|os.O_EXCL))
	if err != nil {
		return nil, err
	}
	want, err := pf.Stat()
	if cerr := pf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, appendAccess,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(h), path)
	got, err := f.Stat()
	if err == nil && !os.SameFile(want, got) {
		err = &fs.PathError{Op: "open", Path: path, Err: errors.New("the file was replaced while being opened")}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// syncDir does nothing: NTFS journals renames and creations itself, and
// Windows has no documented way to fsync a directory.
func syncDir(string) error { return nil }

// fileStandardInfo is FILE_STANDARD_INFO.
type fileStandardInfo struct {
	AllocationSize, EndOfFile int64
	NumberOfLinks             uint32
	DeletePending, Directory  bool
}

// deleted reports whether f has been deleted while open. Windows keeps a
// file opened with FILE_SHARE_DELETE in its directory, pending deletion,
// until the last handle closes, so a path look-up alone would not notice.
func deleted(f *os.File) bool {
	var info fileStandardInfo
	err := windows.GetFileInformationByHandleEx(windows.Handle(f.Fd()), windows.FileStandardInfo,
		(*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	return err == nil && (info.DeletePending || info.NumberOfLinks == 0)
}

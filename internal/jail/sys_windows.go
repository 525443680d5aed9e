package jail

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// handle is an open directory: a handle opened with NtCreateFile relative
// to its parent's handle, so a component is looked up in the directory
// the walk holds, never by a path the system resolves again.
type handle = windows.Handle

// openReadFlags open a file for reading (Windows file systems have no
// FIFOs).
const openReadFlags = os.O_RDONLY

// Information classes x/sys/windows does not name.
const (
	fileLinkInformation = 11 // FILE_LINK_INFORMATION (x/sys's FileLinkInformation is the Ex class)
)

// fileInfo is an fs.FileInfo from GetFileInformationByHandle. Sys returns
// a *syscall.Win32FileAttributeData, as os.Stat's does.
type fileInfo struct {
	name string
	id   ident
	mode fs.FileMode
	data syscall.Win32FileAttributeData
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return int64(fi.data.FileSizeHigh)<<32 | int64(fi.data.FileSizeLow) }
func (fi *fileInfo) Mode() fs.FileMode  { return fi.mode }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(0, fi.data.LastWriteTime.Nanoseconds()) }
func (fi *fileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi *fileInfo) Sys() any           { return &fi.data }

// fileBasicInfo is FILE_BASIC_INFO (zero times are left unchanged).
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}

// fileAttributeTagInfo is FILE_ATTRIBUTE_TAG_INFO.
type fileAttributeTagInfo struct {
	FileAttributes uint32
	ReparseTag     uint32
}

// isNameSurrogate reports whether a reparse tag makes the entry a name for
// another object (symlinks, junctions), as opposed to a file stored
// differently (deduplicated, cloud placeholders), which is itself.
func isNameSurrogate(tag uint32) bool { return tag&0x20000000 != 0 }

// errno turns an NTSTATUS into the Win32 error the rest of the jail (and
// errors.Is with fs errors) understands.
func errno(err error) error {
	var st windows.NTStatus
	if !errors.As(err, &st) {
		return err
	}
	e := st.Errno()
	switch e {
	case windows.ERROR_DIRECTORY:
		return syscall.ENOTDIR
	case windows.ERROR_CANT_RESOLVE_FILENAME:
		return syscall.ELOOP
	}
	return e
}

// ntOpen opens name relative to the directory dir without following a
// reparse point there.
func ntOpen(dir handle, name string, access, options, disposition, attrs uint32) (handle, error) {
	objName, err := windows.NewNTUnicodeString(name)
	if err != nil {
		return windows.InvalidHandle, syscall.EINVAL
	}
	oa := &windows.OBJECT_ATTRIBUTES{
		RootDirectory: dir,
		ObjectName:    objName,
		Attributes:    windows.OBJ_CASE_INSENSITIVE,
	}
	oa.Length = uint32(unsafe.Sizeof(*oa))
	var h handle
	err = windows.NtCreateFile(&h, access|windows.SYNCHRONIZE, oa, &windows.IO_STATUS_BLOCK{}, nil, attrs,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, disposition,
		options|windows.FILE_SYNCHRONOUS_IO_NONALERT|windows.FILE_OPEN_FOR_BACKUP_INTENT|windows.FILE_OPEN_REPARSE_POINT, 0, 0)
	if err != nil {
		return windows.InvalidHandle, errno(err)
	}
	return h, nil
}

// reopen duplicates h (for "." relative to it).
func reopen(h handle) (handle, error) {
	p := windows.CurrentProcess()
	var dup handle
	if err := windows.DuplicateHandle(p, h, p, &dup, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		return windows.InvalidHandle, err
	}
	return dup, nil
}

func closeHandle(h handle) { windows.CloseHandle(h) }

// longPath lets an absolute path past MAX_PATH be opened.
func longPath(p string) string {
	if len(p) < 248 || strings.HasPrefix(p, `\\?\`) {
		return p
	}
	if strings.HasPrefix(p, `\\`) {
		return `\\?\UNC\` + p[2:]
	}
	return `\\?\` + p
}

// openRootDir opens the directory at an absolute path, following links:
// the root's own path is the user's choice, resolved once at Open.
func openRootDir(path string) (handle, error) {
	p, err := windows.UTF16PtrFromString(longPath(filepath.Clean(path)))
	if err != nil {
		return windows.InvalidHandle, syscall.EINVAL
	}
	return windows.CreateFile(p, windows.FILE_LIST_DIRECTORY|windows.FILE_TRAVERSE|windows.FILE_READ_ATTRIBUTES|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
}

// identityOf returns the identity of what path names, following links.
func identityOf(path string) (ident, error) {
	p, err := windows.UTF16PtrFromString(longPath(filepath.Clean(path)))
	if err != nil {
		return ident{}, syscall.EINVAL
	}
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return ident{}, err
	}
	defer windows.CloseHandle(h)
	st, err := statHandle(h, "")
	return st.id, err
}

// statHandle describes the object h is open on, its link count included.
func statHandle(h handle, name string) (objStat, error) {
	var bi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &bi); err != nil {
		return objStat{}, err
	}
	fi := &fileInfo{name: name, data: syscall.Win32FileAttributeData{
		FileAttributes: bi.FileAttributes,
		CreationTime:   syscall.Filetime(bi.CreationTime),
		LastAccessTime: syscall.Filetime(bi.LastAccessTime),
		LastWriteTime:  syscall.Filetime(bi.LastWriteTime),
		FileSizeHigh:   bi.FileSizeHigh,
		FileSizeLow:    bi.FileSizeLow,
	}}
	fi.mode = 0o666
	if bi.FileAttributes&windows.FILE_ATTRIBUTE_READONLY != 0 {
		fi.mode = 0o444
	}
	if bi.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0 {
		fi.mode |= fs.ModeDir | 0o111
	}
	if bi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		var ti fileAttributeTagInfo
		if err := windows.GetFileInformationByHandleEx(h, windows.FileAttributeTagInfo,
			(*byte)(unsafe.Pointer(&ti)), uint32(unsafe.Sizeof(ti))); err != nil {
			return objStat{}, err
		}
		if isNameSurrogate(ti.ReparseTag) {
			// A symlink or junction: a name for something else, which
			// the walk follows (or refuses) itself.
			fi.mode = fi.mode&fs.ModePerm | fs.ModeSymlink
		}
	}
	fi.id = ident{uint64(bi.VolumeSerialNumber), uint64(bi.FileIndexHigh)<<32 | uint64(bi.FileIndexLow)}
	return objStat{id: fi.id, nlink: uint64(bi.NumberOfLinks), info: fi}, nil
}

// lstatAt describes name in dir without following a reparse point.
func lstatAt(dir handle, name string) (objStat, error) {
	if name == "." {
		return statHandle(dir, name)
	}
	h, err := ntOpen(dir, name, windows.FILE_READ_ATTRIBUTES, 0, windows.FILE_OPEN, 0)
	if err != nil {
		return objStat{}, err
	}
	defer windows.CloseHandle(h)
	return statHandle(h, name)
}

// openDirAt opens the directory name in dir without following a symlink:
// a symlink (or junction) is errSymlink.
func openDirAt(dir handle, name string) (handle, error) {
	if name == "." {
		return reopen(dir)
	}
	h, err := ntOpen(dir, name, windows.FILE_LIST_DIRECTORY|windows.FILE_TRAVERSE|windows.FILE_READ_ATTRIBUTES,
		0, windows.FILE_OPEN, 0)
	if err != nil {
		return h, err
	}
	var bi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &bi); err != nil {
		windows.CloseHandle(h)
		return windows.InvalidHandle, err
	}
	if bi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		var ti fileAttributeTagInfo
		err := windows.GetFileInformationByHandleEx(h, windows.FileAttributeTagInfo, (*byte)(unsafe.Pointer(&ti)), uint32(unsafe.Sizeof(ti)))
		if err != nil || isNameSurrogate(ti.ReparseTag) {
			windows.CloseHandle(h)
			if err != nil {
				return windows.InvalidHandle, err
			}
			return windows.InvalidHandle, errSymlink
		}
	}
	if bi.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0 {
		windows.CloseHandle(h)
		return windows.InvalidHandle, syscall.ENOTDIR
	}
	return h, nil
}

// openFileAt opens name in dir without following a reparse point: the
// handle may be a symlink's own, which the caller's stat shows (Unix
// reports errSymlink here instead; both are followed by the walk).
func openFileAt(dir handle, name string, flag int, perm fs.FileMode) (handle, error) {
	if name == "." {
		if flag&os.O_CREATE != 0 {
			return windows.InvalidHandle, fs.ErrExist
		}
		return reopen(dir)
	}
	access := uint32(windows.FILE_GENERIC_READ)
	disposition := uint32(windows.FILE_OPEN)
	options, attrs := uint32(0), uint32(0)
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		access = windows.FILE_GENERIC_WRITE
		if flag&os.O_RDWR != 0 {
			access |= windows.FILE_GENERIC_READ
		}
		options = windows.FILE_NON_DIRECTORY_FILE
	}
	if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
		disposition = windows.FILE_CREATE
		attrs = windows.FILE_ATTRIBUTE_NORMAL
		if perm&0o200 == 0 {
			attrs = windows.FILE_ATTRIBUTE_READONLY
		}
	}
	return ntOpen(dir, name, access, options, disposition, attrs)
}

// reparseBuffer is the start of REPARSE_DATA_BUFFER for symlinks and
// junctions (junctions have no Flags field).
type reparseBuffer struct {
	ReparseTag           uint32
	ReparseDataLength    uint16
	Reserved             uint16
	SubstituteNameOffset uint16
	SubstituteNameLength uint16
	PrintNameOffset      uint16
	PrintNameLength      uint16
}

const symlinkFlagRelative = 1

// readlinkAt returns the target of the symlink name in dir. A junction, an
// absolute symlink or any other name surrogate returns an absolute target,
// which the walk refuses.
func readlinkAt(dir handle, name string) (string, error) {
	h, err := ntOpen(dir, name, windows.FILE_READ_ATTRIBUTES|windows.FILE_READ_EA, 0, windows.FILE_OPEN, 0)
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(h)
	buf := make([]byte, windows.MAXIMUM_REPARSE_DATA_BUFFER_SIZE)
	var n uint32
	if err := windows.DeviceIoControl(h, windows.FSCTL_GET_REPARSE_POINT, nil, 0, &buf[0], uint32(len(buf)), &n, nil); err != nil {
		return "", err
	}
	rb := (*reparseBuffer)(unsafe.Pointer(&buf[0]))
	if rb.ReparseTag != windows.IO_REPARSE_TAG_SYMLINK {
		return `\\?\not-a-symlink`, nil
	}
	const head = int(unsafe.Sizeof(reparseBuffer{})) + 4 // Flags
	flags := *(*uint32)(unsafe.Pointer(&buf[unsafe.Sizeof(reparseBuffer{})]))
	off, size := head+int(rb.PrintNameOffset), int(rb.PrintNameLength)
	if flags&symlinkFlagRelative == 0 {
		return `\\?\absolute`, nil
	}
	if off+size > int(n) || size%2 != 0 {
		return "", syscall.EINVAL
	}
	u := unsafe.Slice((*uint16)(unsafe.Pointer(&buf[off])), size/2)
	return string(utf16.Decode(u)), nil
}

func mkdirAt(dir handle, name string, _ fs.FileMode) error {
	h, err := ntOpen(dir, name, windows.FILE_LIST_DIRECTORY, windows.FILE_DIRECTORY_FILE, windows.FILE_CREATE, windows.FILE_ATTRIBUTE_NORMAL)
	if err != nil {
		return err
	}
	return windows.CloseHandle(h)
}

// removeAt deletes name in dir (a symlink itself, not its target). want,
// if set, is the identity the entry must have: compared on the handle
// the delete goes through.
func removeAt(dir handle, name string, _ bool, want *ident) error {
	h, err := ntOpen(dir, name, windows.DELETE|windows.FILE_READ_ATTRIBUTES|windows.FILE_WRITE_ATTRIBUTES, 0, windows.FILE_OPEN, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	if err := pinned(h, want); err != nil {
		return err
	}
	ex := uint32(windows.FILE_DISPOSITION_DELETE | windows.FILE_DISPOSITION_POSIX_SEMANTICS | windows.FILE_DISPOSITION_IGNORE_READONLY_ATTRIBUTE)
	err = windows.NtSetInformationFile(h, &windows.IO_STATUS_BLOCK{}, (*byte)(unsafe.Pointer(&ex)), uint32(unsafe.Sizeof(ex)), windows.FileDispositionInformationEx)
	if err == nil {
		return nil
	}
	switch err {
	case windows.STATUS_INVALID_PARAMETER, windows.STATUS_INVALID_INFO_CLASS, windows.STATUS_NOT_SUPPORTED, windows.STATUS_NOT_IMPLEMENTED:
	default:
		return errno(err)
	}
	// Older systems (and Wine): the classic disposition, which a
	// read-only file refuses until its attribute is cleared.
	var bi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &bi); err == nil && bi.FileAttributes&windows.FILE_ATTRIBUTE_READONLY != 0 {
		basic := fileBasicInfo{FileAttributes: bi.FileAttributes&^windows.FILE_ATTRIBUTE_READONLY | windows.FILE_ATTRIBUTE_NORMAL}
		windows.SetFileInformationByHandle(h, windows.FileBasicInfo, (*byte)(unsafe.Pointer(&basic)), uint32(unsafe.Sizeof(basic)))
	}
	del := uint32(1)
	return errno(windows.NtSetInformationFile(h, &windows.IO_STATUS_BLOCK{}, (*byte)(unsafe.Pointer(&del)), uint32(unsafe.Sizeof(del)), windows.FileDispositionInformation))
}

// fileNameInformation is FILE_RENAME_INFORMATION and FILE_LINK_INFORMATION:
// a name relative to a directory handle.
type fileNameInformation struct {
	ReplaceIfExists uint32 // a BOOLEAN, padded
	RootDirectory   handle
	FileNameLength  uint32
	FileName        [1]uint16
}

// pinned refuses the handle h unless it is open on the object want names
// (nil: any).
func pinned(h handle, want *ident) error {
	if want == nil {
		return nil
	}
	st, err := statHandle(h, "")
	if err != nil {
		return err
	}
	if st.id != *want {
		return errChanged
	}
	return nil
}

// setName renames (class FileRenameInformation) or links
// (fileLinkInformation) the object name in odir to nname in ndir; want,
// if set, is the identity it must have, compared on the handle the
// rename goes through.
func setName(odir handle, oname string, ndir handle, nname string, class uint32, replace bool, want *ident) error {
	h, err := ntOpen(odir, oname, windows.DELETE|windows.FILE_READ_ATTRIBUTES, 0, windows.FILE_OPEN, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	if err := pinned(h, want); err != nil {
		return err
	}
	name := utf16.Encode([]rune(nname))
	size := int(unsafe.Offsetof(fileNameInformation{}.FileName)) + 2*len(name)
	buf := make([]byte, max(size, int(unsafe.Sizeof(fileNameInformation{}))))
	info := (*fileNameInformation)(unsafe.Pointer(&buf[0]))
	if replace {
		info.ReplaceIfExists = 1
	}
	info.RootDirectory = ndir
	info.FileNameLength = uint32(2 * len(name))
	copy(unsafe.Slice(&info.FileName[0], len(name)), name)
	return errno(windows.NtSetInformationFile(h, &windows.IO_STATUS_BLOCK{}, &buf[0], uint32(len(buf)), class))
}

func renameAt(odir handle, oname string, ndir handle, nname string, want *ident) error {
	return setName(odir, oname, ndir, nname, windows.FileRenameInformation, true, want)
}

func renameNoReplaceAt(odir handle, oname string, ndir handle, nname string, want *ident) error {
	return setName(odir, oname, ndir, nname, windows.FileRenameInformation, false, want)
}

func linkAt(odir handle, oname string, ndir handle, nname string) error {
	return setName(odir, oname, ndir, nname, fileLinkInformation, false, nil)
}

// readDirAt lists the directory h (whose absolute path is abs) sorted by
// name.
func readDirAt(h handle, abs string) ([]fs.DirEntry, error) {
	// A new open of the directory (an empty name relative to it), not a
	// duplicate handle: a duplicate shares the file object, whose listing
	// Wine keeps from the first enumeration.
	dup, err := ntOpen(h, "", windows.FILE_LIST_DIRECTORY|windows.FILE_READ_ATTRIBUTES, windows.FILE_DIRECTORY_FILE, windows.FILE_OPEN, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), abs)
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

// entryInfo describes the entry e of the directory h: Windows lists
// entries with their attributes, sizes and times.
func entryInfo(_ handle, e fs.DirEntry) (fs.FileInfo, error) { return e.Info() }

func isNotEmpty(err error) bool { return errors.Is(err, windows.ERROR_DIR_NOT_EMPTY) }

func isInvalidName(err error) bool {
	return errors.Is(err, windows.ERROR_INVALID_NAME) || errors.Is(err, windows.ERROR_BAD_PATHNAME)
}

// mountOf identifies the volume h is on.
func mountOf(h handle) (uint64, error) {
	st, err := statHandle(h, "")
	return st.id.dev, err
}

// openBeneath: Windows has no single-call resolution beneath a handle;
// the walk always goes one component at a time.
func openBeneath(handle, string) (handle, error) { return windows.InvalidHandle, errNoFastPath }

func parentOf(handle) (handle, error) { return windows.InvalidHandle, errNoFastPath }

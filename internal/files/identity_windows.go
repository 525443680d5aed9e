package files

import (
	"io/fs"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// fileBasicInfo is FILE_BASIC_INFO: times in 100 ns units since 1601.
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}

// fileIdentity returns the creation and change times: an atomic replace
// publishes a new file with a new creation time, an in-place write moves
// the change time (which, unlike mtime, callers cannot set back).
func fileIdentity(f *os.File, _ fs.FileInfo) []int64 {
	var bi fileBasicInfo
	err := windows.GetFileInformationByHandleEx(windows.Handle(f.Fd()), windows.FileBasicInfo,
		(*byte)(unsafe.Pointer(&bi)), uint32(unsafe.Sizeof(bi)))
	if err != nil {
		return nil
	}
	return []int64{bi.CreationTime, bi.ChangeTime}
}

// owner is not meaningful on Windows (ownership is an ACL matter).
func owner(fs.FileInfo) (uid, gid *int) { return nil, nil }

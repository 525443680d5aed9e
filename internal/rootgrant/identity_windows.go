package rootgrant

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/windows"
)

// identify opens the directory itself (FILE_FLAG_OPEN_REPARSE_POINT, so a
// junction or symlink is opened as itself and refused) and reads the volume
// serial number and file index from the open handle.
func identify(dir string) (FileID, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return FileID{}, unavailable("the directory path is not valid")
	}
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return FileID{}, unavailableErr(err)
	}
	defer windows.CloseHandle(h)
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return FileID{}, unavailableErr(err)
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		return FileID{}, unavailable("the directory changed into a link or junction")
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0 {
		return FileID{}, unavailable("the path is not a directory")
	}
	return FileID{
		Volume: uint64(info.VolumeSerialNumber),
		File:   uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow),
	}, nil
}

// isLink reports symlinks, junctions and every other reparse point.
func isLink(fi fs.FileInfo) bool {
	if fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return true
	}
	d, ok := fi.Sys().(*syscall.Win32FileAttributeData)
	return ok && d.FileAttributes&syscall.FILE_ATTRIBUTE_REPARSE_POINT != 0
}

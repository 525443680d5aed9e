package rootgrant

import (
	"io/fs"
	"syscall"
	"testing"
	"time"
)

// fakeInfo is an fs.FileInfo with Windows attributes, for the reparse-point
// decision where the test cannot make a real junction (Wine).
type fakeInfo struct {
	mode  fs.FileMode
	attrs uint32
}

func (f fakeInfo) Name() string       { return "x" }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return &syscall.Win32FileAttributeData{FileAttributes: f.attrs} }

func TestIsLinkAttributes(t *testing.T) {
	const dir = syscall.FILE_ATTRIBUTE_DIRECTORY
	tests := []struct {
		fi   fakeInfo
		want bool
	}{
		{fakeInfo{fs.ModeDir, dir}, false},
		{fakeInfo{fs.ModeDir | fs.ModeSymlink, dir | syscall.FILE_ATTRIBUTE_REPARSE_POINT}, true},
		{fakeInfo{fs.ModeDir | fs.ModeIrregular, dir | syscall.FILE_ATTRIBUTE_REPARSE_POINT}, true}, // junction
		{fakeInfo{fs.ModeDir, dir | syscall.FILE_ATTRIBUTE_REPARSE_POINT}, true},                    // other reparse tag
	}
	for _, tt := range tests {
		if got := isLink(tt.fi); got != tt.want {
			t.Errorf("isLink(%v, %#x) = %v, want %v", tt.fi.mode, tt.fi.attrs, got, tt.want)
		}
	}
}

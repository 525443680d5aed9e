package rootgrant

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
)

// FileID is a directory's identity in its file system: device and inode
// number on Unix, volume serial number and file index on Windows. A
// directory removed and re-created at the same path gets a new FileID.
type FileID struct {
	Volume uint64
	File   uint64
}

// Root is a directory that may serve as a session root.
type Root struct {
	// Path is the canonical absolute path: every link resolved.
	Path string
	// ID is the directory's file-system identity.
	ID FileID
	// Fingerprint is Fingerprint(Path, ID).
	Fingerprint string
}

// Check resolves dir and reports whether it may be a session root: an
// existing, accessible, plain directory (not a symlink, junction or other
// reparse point) that is not a forbidden system root. Links in dir's
// ancestors are resolved into the canonical path; a link as the last
// component is refused. Failures are DIRECTORY_UNAVAILABLE errors.
func Check(dir string) (Root, error) {
	if dir == "" || !filepath.IsAbs(dir) {
		return Root{}, unavailable("the directory path is not absolute")
	}
	clean := filepath.Clean(dir)
	fi, err := os.Lstat(clean)
	if err != nil {
		return Root{}, unavailableErr(err)
	}
	if isLink(fi) {
		return Root{}, unavailable("the directory is a symbolic link or junction")
	}
	if !fi.IsDir() {
		return Root{}, unavailable("the path is not a directory")
	}
	canon, err := filepath.EvalSymlinks(clean)
	if err != nil {
		return Root{}, unavailableErr(err)
	}
	if Forbidden(canon) {
		return Root{}, unavailable("the directory is a protected system directory")
	}
	id, err := identify(canon)
	if err != nil {
		return Root{}, err
	}
	return Root{Path: canon, ID: id, Fingerprint: Fingerprint(canon, id)}, nil
}

func unavailableErr(err error) *errcode.Error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return unavailable("the directory no longer exists")
	case errors.Is(err, fs.ErrPermission):
		return unavailable("the directory is not accessible")
	}
	return unavailable("the directory cannot be opened")
}

// Fingerprint returns the lowercase hex SHA-256 of a canonical root path and
// its file-system identity.
func Fingerprint(root string, id FileID) string {
	h := sha256.New()
	h.Write([]byte("hostlink root fingerprint v1\x00"))
	h.Write([]byte(root))
	var b [17]byte
	binary.BigEndian.PutUint64(b[1:9], id.Volume)
	binary.BigEndian.PutUint64(b[9:], id.File)
	h.Write(b[:])
	return hex.EncodeToString(h.Sum(nil))
}

// Forbidden reports whether the canonical path p is a system directory that
// is never a session or browse root on this OS.
func Forbidden(p string) bool {
	return forbiddenOn(runtime.GOOS, os.Getenv("SystemRoot"), p)
}

// forbiddenOn is Forbidden for goos, given the Windows directory (the
// %SystemRoot% variable, C:\Windows when unset).
//
// Linux: "/", /proc, /sys and /dev with all below them, and /run with all
// below it except user media under /run/media. macOS: "/", /System, /dev
// and below, /private. Windows: the Windows directory and below it.
func forbiddenOn(goos, systemRoot, p string) bool {
	if goos == "windows" {
		if systemRoot == "" {
			systemRoot = `C:\Windows`
		}
		p = strings.ToLower(strings.TrimRight(p, `\`))
		w := strings.ToLower(strings.TrimRight(systemRoot, `\`))
		return p == w || strings.HasPrefix(p, w+`\`)
	}
	under := func(base string) bool { return p == base || strings.HasPrefix(p, base+"/") }
	if p == "/" {
		return true
	}
	switch goos {
	case "darwin":
		return under("/System") || under("/dev") || p == "/private"
	default:
		if under("/proc") || under("/sys") || under("/dev") {
			return true
		}
		return under("/run") && !strings.HasPrefix(p, "/run/media/")
	}
}

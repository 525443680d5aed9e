package jail

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode"
)

// probeCaseInsensitive reports whether names on dir's volume compare without
// case. It probes the file system rather than assuming per OS: macOS can
// have case-sensitive APFS, Windows per-directory case sensitivity, Linux
// case-folded ext4.
//
// It first looks the root's own name up in its parent with the case swapped,
// which needs no writes. When the name has no letters it creates and looks up
// a probe file, if allowed; otherwise it falls back to the OS default.
func probeCaseInsensitive(dir string, mayWrite bool) bool {
	parent, base := filepath.Split(dir)
	if swapped := swapCase(base); swapped != base && parent != "" {
		return sameFile(dir, filepath.Join(parent, swapped))
	}
	if mayWrite {
		var b [8]byte
		rand.Read(b[:])
		name := ".hostlink-case-probe-" + hex.EncodeToString(b[:]) + "-x"
		p := filepath.Join(dir, name)
		if f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
			f.Close()
			defer os.Remove(p)
			return sameFile(p, filepath.Join(dir, swapCase(name)))
		}
	}
	return runtime.GOOS == "windows" || runtime.GOOS == "darwin"
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(fa, fb)
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsUpper(r):
			return unicode.ToLower(r)
		case unicode.IsLower(r):
			return unicode.ToUpper(r)
		}
		return r
	}, s)
}

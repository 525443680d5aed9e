package hostinfo

import (
	"runtime"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Arch returns the wire protocol's arch value, x86_64 or arm64, for the
// architecture hostlink was built for. An amd64 build running under
// emulation (Rosetta, Windows on Arm) reports x86_64, which is what the
// process can actually execute natively.
func Arch() (string, error) {
	return NormalizeArch(runtime.GOARCH)
}

// NormalizeArch maps the spellings of an architecture that Go, uname and
// Windows use to the wire value. Anything else is an UNSUPPORTED_ARCH error.
func NormalizeArch(s string) (string, error) {
	switch s {
	case "amd64", "AMD64", "x86_64":
		return "x86_64", nil
	case "arm64", "ARM64", "aarch64":
		return "arm64", nil
	}
	return "", errcode.New(errcode.UnsupportedArch, "unsupported architecture %q", s)
}

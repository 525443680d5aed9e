package update

import (
	"os"
	"path/filepath"
	"strings"
)

// Manager is the package manager that installed a hostlink binary, and
// the command that updates it there.
type Manager struct {
	Name    string `json:"name"`
	Command string `json:"command"`
}

// InstalledBy is where the .deb and .rpm packages record which they are
// ("deb" or "rpm"), beside /usr/bin/hostlink.
const InstalledBy = "/usr/share/hostlink/installed-by"

// systemDirs hold binaries only the system's package manager installs.
var systemDirs = []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"}

// Managed returns the package manager that owns exe (a resolved path), or
// nil when nothing does (install.sh, an archive unpacked by hand, go
// install). readFile reads InstalledBy (os.ReadFile; tests give another).
func Managed(exe string, readFile func(string) ([]byte, error)) *Manager {
	slash := filepath.ToSlash(exe)
	lower := strings.ToLower(slash)
	switch {
	case strings.Contains(slash, "/Cellar/hostlink/"):
		return &Manager{"Homebrew", "brew upgrade hostlink"}
	case strings.Contains(lower, "/scoop/apps/hostlink/"):
		return &Manager{"Scoop", "scoop update hostlink"}
	case strings.Contains(lower, "/microsoft/winget/packages/hostlink.hostlink"):
		return &Manager{"winget", "winget upgrade hostlink.hostlink"}
	}
	dir := filepath.ToSlash(filepath.Dir(exe))
	for _, d := range systemDirs {
		if dir != d {
			continue
		}
		b, _ := readFile(InstalledBy)
		switch strings.TrimSpace(string(b)) {
		case "deb":
			return &Manager{"the hostlink .deb package (apt)", "sudo apt update && sudo apt install --only-upgrade hostlink"}
		case "rpm":
			return &Manager{"the hostlink .rpm package (dnf, zypper)", "sudo dnf upgrade hostlink (or: sudo zypper update hostlink)"}
		}
		return &Manager{"the system's package manager (" + d + " is its)", "your distribution's package manager"}
	}
	return nil
}

// ManagedExe is Managed for the running binary.
func ManagedExe(exe string) *Manager { return Managed(exe, os.ReadFile) }

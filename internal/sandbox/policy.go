package sandbox

import (
	"path/filepath"

	"github.com/hostlink/hostlink/internal/sandboxapi"
)

// Mode is a sandbox mode, as configured by [commands] sandbox
// (sandboxapi.Mode).
type Mode = sandboxapi.Mode

// Modes: see sandboxapi.
const (
	Workdir = sandboxapi.Workdir
	Off     = sandboxapi.Off
)

// Policy is what one command may do. The zero Policy is not valid: Mode
// and Workdir are required.
type Policy struct {
	Mode Mode
	// Workdir is the absolute directory of the command's workdir; the
	// command may write anywhere below it.
	Workdir string
	// Writable are further absolute directories the command may write in
	// (build caches, for example).
	Writable []string
	// ReadOnly are further absolute directories that stay visible to the
	// command, read-only, where the sandbox gives it a private /tmp
	// (hostlink keeps the program's own directory so already).
	ReadOnly []string
	// Hidden are absolute paths the command may not read or list (the
	// user's credential stores).
	Hidden []string
	// Protected are hostlink's own directories and files (configuration,
	// state, audit log, logs, runtime sockets): hidden like Hidden, always,
	// even when they lie inside the workdir or a writable path.
	Protected []string
	// Guarded are hostlink's program files (its executable, autostart
	// unit, shell completions): the command may read and run them but
	// never change, replace, move or remove them, even inside the workdir
	// or a writable path. Nor may it move or remove a directory that
	// holds a guarded or protected path there (to put another in its
	// place).
	Guarded []string
	// Network lets the command use the network.
	Network bool
	// TmpRoot holds every command's private temporary directory (its
	// TMPDIR): a directory of hostlink's own, in a place only the user
	// can create names in (the state directory), never a guessable name
	// in a shared one. It is created if missing and must be a directory
	// of the user's, closed to everyone else; the sandbox hides it from
	// commands, each of which sees only its own directory below it.
	TmpRoot string
}

// DefaultHidden returns the paths hidden from commands unless [commands]
// hidden says otherwise: the usual stores of credentials and keys below
// home, for goos. They are relative to home, '/'-separated.
func DefaultHidden(goos string) []string {
	common := []string{
		".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube",
		".docker/config.json", ".netrc", ".git-credentials", ".config/gh",
		".password-store", ".npmrc", ".pypirc", ".cargo/credentials.toml",
		".terraform.d/credentials.tfrc.json", ".vault-token", ".config/op",
		".mozilla", ".thunderbird",
	}
	switch goos {
	case "darwin":
		return append(common,
			"Library/Keychains", "Library/Cookies",
			"Library/Application Support/Google/Chrome",
			"Library/Application Support/Chromium",
			"Library/Application Support/Firefox",
			"Library/Application Support/BraveSoftware",
			"Library/Application Support/Microsoft Edge",
			"Library/Safari",
		)
	case "windows":
		return append(common,
			"AppData/Local/Google/Chrome/User Data",
			"AppData/Local/Microsoft/Edge/User Data",
			"AppData/Roaming/Mozilla",
			"AppData/Roaming/Microsoft/Credentials",
			"AppData/Local/Microsoft/Credentials",
			"AppData/Roaming/Microsoft/Protect",
		)
	}
	return append(common,
		".local/share/keyrings", ".pki",
		".config/google-chrome", ".config/chromium",
		".config/BraveSoftware", ".config/microsoft-edge",
	)
}

// ResolveHidden turns configured hidden paths (absolute, or relative to
// home) into absolute ones.
func ResolveHidden(paths []string, home string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		p = filepath.FromSlash(p)
		if !filepath.IsAbs(p) {
			if home == "" {
				continue
			}
			p = filepath.Join(home, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

package completion

import (
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

// Shells are the shells Write knows.
var Shells = []string{"bash", "zsh", "fish", "powershell"}

// Write writes the completion script for shell, completing the program name
// from app's commands and flags.
func Write(w io.Writer, shell, name string, app *kong.Application) error {
	root := build(app)
	var s string
	switch shell {
	case "bash":
		s = bash(name, root)
	case "zsh":
		s = zsh(name, root)
	case "fish":
		s = fish(name, root)
	case "powershell":
		s = powershell(name, root)
	default:
		return fmt.Errorf("completion: unknown shell %q (want one of %s)", shell, strings.Join(Shells, ", "))
	}
	_, err := io.WriteString(w, s)
	return err
}

// fname makes name usable in a shell function name.
func fname(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
}

// squote quotes s for sh, zsh and fish alike: single quotes, with each
// quote (and, for fish, each backslash) written outside them.
func squote(s string) string {
	s = strings.ReplaceAll(s, `\`, `'\\'`)
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

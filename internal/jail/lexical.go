package jail

import (
	"runtime"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Flavor selects the path syntax and naming rules to apply. The lexical
// checks are pure functions of a path and a Flavor, so the Windows rules are
// tested on every OS.
type Flavor uint8

const (
	// Unix: '/' separates; names may hold any byte but NUL (hostlink also
	// refuses control characters, see checkName).
	Unix Flavor = iota
	// Windows: '\' and '/' separate; drive letters, UNC and device prefixes;
	// reserved device names and NTFS alternate data streams.
	Windows
)

// HostFlavor is the Flavor of the running OS.
func HostFlavor() Flavor {
	if runtime.GOOS == "windows" {
		return Windows
	}
	return Unix
}

// maxComponent is the longest name most file systems accept (bytes on Unix,
// UTF-16 code units on Windows).
const maxComponent = 255

// maxPathFor is the longest absolute path the OS accepts. Windows paths longer
// than MAX_PATH are reached through \\?\ by Go's os package, so the limit is
// the NT one.
func maxPathFor(goos string) int {
	switch goos {
	case "windows":
		return 32767
	case "darwin", "ios":
		return 1024 - 1
	default:
		return 4096 - 1
	}
}

// reservedBase holds the Windows device names that cannot be used as a file
// name in any directory, with or without an extension.
var reservedBase = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true,
	"CONIN$": true, "CONOUT$": true, "CLOCK$": true,
}

// isReservedWindowsName reports whether name is a Windows device name: CON,
// PRN, AUX, NUL, COM0-9, LPT0-9 and their superscript-digit forms, in any
// case, with or without an extension, with trailing dots or spaces.
func isReservedWindowsName(name string) bool {
	base := name
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.TrimRight(base, " .")
	base = strings.ToUpper(base)
	if reservedBase[base] {
		return true
	}
	for _, p := range []string{"COM", "LPT"} {
		rest, ok := strings.CutPrefix(base, p)
		if !ok {
			continue
		}
		switch rest {
		case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
			return true
		}
	}
	return false
}

// checkName validates one path component (not "." or "..").
func checkName(name string, f Flavor) *errcode.Error {
	if !utf8.ValidString(name) {
		return errcode.New(errcode.PathInvalidChars, "path component is not valid UTF-8")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return errcode.New(errcode.PathInvalidChars, "path contains a control character")
		}
	}
	if f == Windows {
		if strings.ContainsAny(name, `<>:"|?*`) {
			if strings.ContainsRune(name, ':') {
				return errcode.New(errcode.PathInvalidChars, "path names an alternate data stream or contains ':'")
			}
			return errcode.New(errcode.PathInvalidChars, `path contains one of < > : " | ? *`)
		}
		if isReservedWindowsName(name) {
			return errcode.New(errcode.PathReservedName, "path uses a reserved Windows device name")
		}
		if strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
			return errcode.New(errcode.PathInvalidChars, "path component ends in a dot or space")
		}
		if len(utf16.Encode([]rune(name))) > maxComponent {
			return errcode.New(PathTooLong, "path component is longer than %d characters", maxComponent)
		}
		return nil
	}
	if len(name) > maxComponent {
		return errcode.New(PathTooLong, "path component is longer than %d bytes", maxComponent)
	}
	return nil
}

// PathTooLong is returned for a path or component past the OS limit.
const PathTooLong errcode.Code = "PATH_TOO_LONG"

// parsed is a lexically parsed path.
type parsed struct {
	abs   bool
	vol   string   // Windows volume: "C:" or `\\server\share`; "" when rooted on the root's volume or on Unix
	comps []string // components after the volume; "." removed, ".." kept
}

// parse splits p by the flavor's rules. It refuses shapes that can never name
// something inside a root: device namespaces, drive-relative paths.
func parse(p string, f Flavor) (parsed, *errcode.Error) {
	if strings.IndexByte(p, 0) >= 0 {
		return parsed{}, errcode.New(errcode.PathInvalidChars, "path contains a NUL byte")
	}
	if f == Unix {
		return parsed{abs: strings.HasPrefix(p, "/"), comps: splitComps(p, "/")}, nil
	}
	s := strings.ReplaceAll(p, "/", `\`)
	var out parsed
	switch {
	case strings.HasPrefix(s, `\\?\UNC\`), strings.HasPrefix(strings.ToUpper(s), `\\?\UNC\`):
		s = `\\` + s[len(`\\?\UNC\`):]
	case strings.HasPrefix(s, `\\?\`):
		s = s[len(`\\?\`):]
	case strings.HasPrefix(s, `\\.\`), strings.HasPrefix(s, `\??\`):
		return parsed{}, errcode.New(errcode.PathOutsideRoot, "device namespace paths are outside every workdir")
	}
	switch {
	case strings.HasPrefix(s, `\\`):
		rest := strings.TrimLeft(s, `\`)
		parts := strings.SplitN(rest, `\`, 3)
		if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
			return parsed{}, errcode.New(errcode.PathOutsideRoot, "incomplete UNC path")
		}
		out.abs, out.vol = true, `\\`+parts[0]+`\`+parts[1]
		if len(parts) == 3 {
			s = parts[2]
		} else {
			s = ""
		}
	case len(s) >= 2 && s[1] == ':' && isLetter(s[0]):
		if len(s) == 2 || s[2] != '\\' {
			return parsed{}, errcode.New(errcode.PathOutsideRoot, "drive-relative paths are not allowed")
		}
		out.abs, out.vol = true, strings.ToUpper(s[:2])
		s = s[2:]
	case strings.HasPrefix(s, `\`):
		out.abs = true
	}
	out.comps = splitComps(s, `\`)
	return out, nil
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func splitComps(s, sep string) []string {
	var comps []string
	for _, c := range strings.Split(s, sep) {
		if c == "" || c == "." {
			continue
		}
		comps = append(comps, c)
	}
	return comps
}

// clean validates every component and applies "..". It returns
// errcode.PathOutsideRoot when ".." climbs above the first component.
func clean(comps []string, f Flavor) ([]string, *errcode.Error) {
	out := make([]string, 0, len(comps))
	for _, c := range comps {
		if c == ".." {
			if len(out) == 0 {
				return nil, errcode.New(errcode.PathOutsideRoot, "path climbs above its workdir")
			}
			out = out[:len(out)-1]
			continue
		}
		if err := checkName(c, f); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

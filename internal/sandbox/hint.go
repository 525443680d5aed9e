package sandbox

import (
	"fmt"
	"github.com/hostlink/hostlink/internal/sandbox/pathtree"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// maxHints is how many explanations one hint holds.
const maxHints = 3

// hintRes are the patterns Hint reads a command's errors with.
type hintRes struct{ denied, missing, network, path *regexp.Regexp }

// hintPatterns are compiled at the first hint, not at every hostlink
// process start.
var hintPatterns = sync.OnceValue(func() (p hintRes) {
	// Errors the sandbox's denials show up as, in the words of the C
	// library, Go, Python, Node and the shells.
	p.denied = regexp.MustCompile(`(?i)permission denied|operation not permitted|read-only file system|\bEACCES\b|\bEPERM\b|\bEROFS\b|access is denied`)
	// What a hidden path, or one below the /tmp the sandbox replaces,
	// shows up as.
	p.missing = regexp.MustCompile(`(?i)no such file or directory|\bENOENT\b|cannot find`)
	p.network = regexp.MustCompile(`(?i)network is unreachable|\bENETUNREACH\b|could not resolve|temporary failure in name resolution|name or service not known|\bEAI_AGAIN\b|getaddrinfo|connect: permission denied|dial tcp.*permission denied|no such host`)
	// Absolute paths in an error line (Unix, or Windows drive paths).
	p.path = regexp.MustCompile("(?:^|[\\s'\"`(=:])((?:/|[A-Za-z]:\\\\)[^\\s'\"`():;,]*)")
	return p
})

// Hint explains the errors of a command that failed under p, where they
// look like the sandbox's denials: which rule, which path or address, and
// how to allow it. workdir is the workdir's absolute path. It returns ""
// when nothing in stderr points at the sandbox.
func Hint(p Policy, workdir, stderr string) string {
	if p.Mode != Workdir {
		return ""
	}
	var hints []string
	seen := map[string]bool{}
	addHint := func(h string) {
		if !seen[h] && len(hints) < maxHints {
			seen[h] = true
			hints = append(hints, h)
		}
	}
	writable := append([]string{workdir}, p.Writable...)
	re := hintPatterns()
	for line := range strings.Lines(stderr) {
		if !p.Network && re.network.MatchString(line) {
			addHint(`the sandbox has no network ([commands] network = "off"): set network = "on" there, or ask for this command with "sandbox": "network" (approved as commands_unsandboxed)`)
			continue
		}
		denied, missing := re.denied.MatchString(line), re.missing.MatchString(line)
		if !denied && !missing {
			continue
		}
		for _, m := range re.path.FindAllStringSubmatch(line, -1) {
			path := filepath.Clean(m[1])
			if !filepath.IsAbs(path) {
				continue
			}
			switch {
			case missing && pathtree.WithinAny(path, p.Protected) == "" && pathtree.WithinAny(path, p.Hidden) == "":
				if pathtree.Within(path, "/tmp") && pathtree.WithinAny(path, writable) == "" && !denied {
					addHint(fmt.Sprintf("%s is in the machine's /tmp, which sandboxed commands do not see: they get a private /tmp ($TMPDIR)", path))
				}
			case pathtree.WithinAny(path, p.Protected) != "":
				addHint(fmt.Sprintf("%s is hostlink's own (%s): commands may never read or change it", path, pathtree.WithinAny(path, p.Protected)))
			case pathtree.WithinAny(path, p.Guarded) != "":
				addHint(fmt.Sprintf("%s is hostlink's own program or autostart file (%s): commands may read it, never change it", path, pathtree.WithinAny(path, p.Guarded)))
			case pathtree.WithinAny(path, p.Hidden) != "":
				addHint(fmt.Sprintf(`%s is hidden from commands by [commands] hidden (%s): remove it from that list to let commands read it, or run this command with "sandbox": "off"`, path, pathtree.WithinAny(path, p.Hidden)))
			case pathtree.WithinAny(path, writable) == "" && !isDevice(path):
				addHint(fmt.Sprintf(`%s is outside where the sandbox lets commands write (the workdir %s, $TMPDIR and [commands] writable): if the command was writing there, add its directory to writable, or run this command with "sandbox": "off"`, path, workdir))
			}
		}
	}
	return strings.Join(hints, "; ")
}

func isDevice(path string) bool {
	return strings.HasPrefix(path, "/dev/") || strings.HasPrefix(path, "/proc/")
}

package update

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Namespace and Principal are what the release's signature must carry
// (docs/RELEASING.md): ssh-keygen -Y verify -I release@hostlink -n hostlink-release.
const (
	Namespace = "hostlink-release"
	Principal = "release@hostlink"
)

// releaseSigners is packaging/keys/allowed_signers, the hostlink release
// key (internal/release's TestReleaseKey keeps the copies equal).
//
//go:embed allowed_signers
var releaseSigners []byte

// Signer is one key of an allowed-signers file that may sign releases.
type Signer struct {
	Key ssh.PublicKey
	// Source says where the key came from, for messages: "the hostlink
	// release key" or the file's path.
	Source string
}

// Fingerprint is the key's SHA256 fingerprint, as ssh-keygen prints it.
func (s Signer) Fingerprint() string { return ssh.FingerprintSHA256(s.Key) }

// Describe names the key for people: its type, fingerprint and source.
func (s Signer) Describe() string {
	typ := strings.ToUpper(strings.TrimPrefix(s.Key.Type(), "ssh-"))
	return typ + " key " + s.Fingerprint() + " (" + s.Source + ")"
}

// ReleaseSigners is the release key built into this binary.
func ReleaseSigners() []Signer {
	s, err := ParseAllowedSigners(releaseSigners, "the hostlink release key")
	if err != nil || len(s) == 0 {
		panic("update: the embedded release key does not parse: " + fmt.Sprint(err))
	}
	return s
}

// LoadSigners reads an allowed-signers file: the keys another party signs
// its releases with (a mirror; tests).
func LoadSigners(path string) ([]Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseAllowedSigners(b, path)
	if err != nil {
		return nil, err
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("%s: no key for %s in namespace %s", path, Principal, Namespace)
	}
	return s, nil
}

// ParseAllowedSigners returns the keys of b (ssh-keygen's allowed-signers
// format, "principals [options] keytype base64 [comment]") that may sign
// as Principal in Namespace. A line for another principal, or whose
// namespaces="..." option leaves Namespace out, is not one of them; so is
// a certificate authority (cert-authority), which this package does not
// support. Options other than namespaces and cert-authority (valid-after,
// valid-before) make the line an error rather than be ignored.
func ParseAllowedSigners(b []byte, source string) ([]Signer, error) {
	var out []Signer
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		principals, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		// The options come before the key when the next word is not a key
		// type; namespaces="a,b" holds no spaces in our files, but may.
		var opts []string
		if !isKeyType(firstWord(rest)) {
			var o string
			o, rest = cutOptions(rest)
			opts = splitOptions(o)
		}
		pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(rest))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", source, n, err)
		}
		namespaces, certAuthority := []string(nil), false
		for _, o := range opts {
			switch {
			case strings.EqualFold(o, "cert-authority"):
				certAuthority = true
			case strings.HasPrefix(strings.ToLower(o), "namespaces="):
				namespaces = strings.Split(strings.Trim(o[len("namespaces="):], `"`), ",")
			default:
				return nil, fmt.Errorf("%s:%d: unsupported option %q", source, n, o)
			}
		}
		if certAuthority || !matchPrincipal(principals) || (namespaces != nil && !slices.Contains(namespaces, Namespace)) {
			continue
		}
		out = append(out, Signer{Key: pub, Source: source})
	}
	return out, sc.Err()
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return w
}

func isKeyType(w string) bool {
	return strings.HasPrefix(w, "ssh-") || strings.HasPrefix(w, "ecdsa-") || strings.HasPrefix(w, "sk-")
}

// cutOptions splits "opt,opt=\"a b\" keytype ..." at the first space
// outside quotes.
func cutOptions(s string) (opts, rest string) {
	quoted := false
	for i, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ' ' && !quoted:
			return s[:i], strings.TrimSpace(s[i+1:])
		}
	}
	return s, ""
}

// splitOptions splits options at commas outside quotes.
func splitOptions(s string) []string {
	var out []string
	quoted, start := false, 0
	for i, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// matchPrincipal reports whether a comma-separated list of principals
// (patterns with * and ?) names Principal.
func matchPrincipal(list string) bool {
	for _, p := range strings.Split(list, ",") {
		if ok, _ := path.Match(p, Principal); ok && !strings.HasPrefix(p, "!") {
			return true
		}
	}
	return false
}

package update

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/mod/semver"
)

// DefaultURL is where the latest release's files are.
const DefaultURL = "https://github.com/hostlink/hostlink/releases/latest/download"

// VersionURL is where release version's files are.
func VersionURL(version string) string {
	return "https://github.com/hostlink/hostlink/releases/download/v" + strings.TrimPrefix(version, "v")
}

// userAgent is the same for every hostlink: it tells the server nothing
// about this one.
const userAgent = "hostlink-update"

// Limits on what a release server may send.
const (
	maxSumsBytes    = 1 << 20
	maxSigBytes     = 64 << 10
	maxArchiveBytes = 512 << 20
)

// Release is a release whose SHA256SUMS verified.
type Release struct {
	URL     string // the directory of its files
	Version string // X.Y.Z, from the archives' names
	// Sums is SHA256SUMS: file name -> hex SHA-256.
	Sums map[string]string
	// Signer is the key that signed SHA256SUMS.
	Signer Signer
}

// Fetch downloads SHA256SUMS and SHA256SUMS.sig from base, verifies the
// signature with signers, and returns the release they describe. Nothing
// of SHA256SUMS is used before its signature verifies.
func Fetch(ctx context.Context, client *http.Client, base string, signers []Signer) (*Release, error) {
	base = strings.TrimSuffix(base, "/")
	if err := checkURL(base); err != nil {
		return nil, err
	}
	sums, err := get(ctx, client, base+"/SHA256SUMS", maxSumsBytes)
	if err != nil {
		return nil, err
	}
	sig, err := get(ctx, client, base+"/SHA256SUMS.sig", maxSigBytes)
	if err != nil {
		return nil, err
	}
	signer, err := Verify(sums, sig, signers)
	if err != nil {
		return nil, fmt.Errorf("the signature on %s/SHA256SUMS does not verify with %s: %w", base, describeSigners(signers), err)
	}
	r := &Release{URL: base, Signer: signer}
	if r.Sums, err = parseSums(sums); err != nil {
		return nil, fmt.Errorf("%s/SHA256SUMS: %w", base, err)
	}
	if r.Version, err = releaseVersion(r.Sums); err != nil {
		return nil, fmt.Errorf("%s/SHA256SUMS: %w", base, err)
	}
	return r, nil
}

func describeSigners(signers []Signer) string {
	if len(signers) == 0 {
		return "no key"
	}
	return signers[0].Source
}

// Verify checks an armored SSH signature (ssh-keygen -Y sign -n
// hostlink-release) over msg against each signer in turn, and returns the
// one that made it.
func Verify(msg, armored []byte, signers []Signer) (Signer, error) {
	sig, err := sshsig.Unarmor(armored)
	if err != nil {
		return Signer{}, fmt.Errorf("malformed signature: %w", err)
	}
	if sig.Namespace != Namespace {
		return Signer{}, fmt.Errorf("the signature is for namespace %q, not %q", sig.Namespace, Namespace)
	}
	for _, s := range signers {
		if err := sshsig.Verify(bytes.NewReader(msg), sig, s.Key, sig.HashAlgorithm, Namespace); err == nil {
			return s, nil
		} else if !errors.Is(err, sshsig.ErrPublicKeyMismatch) {
			return Signer{}, err
		}
	}
	return Signer{}, fmt.Errorf("it was made by another key (%s)", sshFingerprint(sig))
}

func sshFingerprint(sig *sshsig.Signature) string {
	if sig.PublicKey == nil {
		return "unknown"
	}
	return Signer{Key: sig.PublicKey}.Fingerprint()
}

// parseSums reads "<hex>  <name>" lines.
func parseSums(b []byte) (map[string]string, error) {
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		name = strings.TrimPrefix(name, "*")
		if !ok || len(sum) != 64 || name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
			return nil, fmt.Errorf("malformed line %q", sc.Text())
		}
		sums[name] = sum
	}
	return sums, sc.Err()
}

// releaseVersion is the version every archive of the release names
// (hostlink_X.Y.Z_os_arch.tar.gz or .zip).
func releaseVersion(sums map[string]string) (string, error) {
	version := ""
	for name := range sums {
		v, _, _, ok := parseArchiveName(name)
		if !ok {
			continue
		}
		if version != "" && v != version {
			return "", fmt.Errorf("archives of two versions, %s and %s", version, v)
		}
		version = v
	}
	if version == "" {
		return "", errors.New("lists no hostlink archive")
	}
	if !semver.IsValid("v" + version) {
		return "", fmt.Errorf("version %q is not a release version", version)
	}
	return version, nil
}

// ArchiveName is the release archive for goos/goarch.
func ArchiveName(version, goos, goarch string) string {
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	return "hostlink_" + version + "_" + goos + "_" + goarch + ext
}

// parseArchiveName splits hostlink_<version>_<os>_<arch>.<ext>; the
// version may hold underscores only in theory, so it is what is left.
func parseArchiveName(name string) (version, goos, goarch string, ok bool) {
	rest, found := strings.CutPrefix(name, "hostlink_")
	if !found {
		return "", "", "", false
	}
	switch {
	case strings.HasSuffix(rest, ".tar.gz"):
		rest = strings.TrimSuffix(rest, ".tar.gz")
	case strings.HasSuffix(rest, ".zip"):
		rest = strings.TrimSuffix(rest, ".zip")
	default:
		return "", "", "", false
	}
	i := strings.LastIndexByte(rest, '_')
	if i < 0 {
		return "", "", "", false
	}
	goarch, rest = rest[i+1:], rest[:i]
	j := strings.LastIndexByte(rest, '_')
	if j < 0 {
		return "", "", "", false
	}
	return rest[:j], rest[j+1:], goarch, true
}

// Compare orders two versions as semantic versions: -1, 0 or +1. ok is
// false when either is not a release version (a development build's
// "devel"), which cannot be ordered.
func Compare(a, b string) (c int, ok bool) {
	va, vb := "v"+strings.TrimPrefix(a, "v"), "v"+strings.TrimPrefix(b, "v")
	if !semver.IsValid(va) || !semver.IsValid(vb) {
		return 0, false
	}
	return semver.Compare(va, vb), true
}

// checkURL allows https, and http only to a loopback host (a local
// mirror; tests): a release over plain http from elsewhere is refused
// before anything is fetched, even though the signature would catch a
// forgery, so that no one on the path learns what is being fetched.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("release URL %q: %w", raw, err)
	}
	switch {
	case u.Scheme == "https" && u.Host != "":
		return nil
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("release URL %q: want https://, or http:// to a loopback address", raw)
}

// get fetches url, refusing more than max bytes.
func get(ctx context.Context, client *http.Client, url string, max int64) ([]byte, error) {
	resp, err := open(ctx, client, url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("downloading %s: %w", url, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", url, max)
	}
	return b, nil
}

func open(ctx context.Context, client *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("downloading %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("downloading %s: %s", url, resp.Status)
	}
	return resp, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Client is the HTTP client updates use: a time limit for the whole of a
// download, and redirects (GitHub's go to its storage) held to the same
// rule as the first URL.
func Client() *http.Client {
	return &http.Client{
		Timeout: 10 * time.Minute,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("too many redirects")
			}
			return checkURL(req.URL.String())
		},
	}
}

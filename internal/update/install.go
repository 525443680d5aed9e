package update

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"

	"path/filepath"
	"time"

	"github.com/hostlink/hostlink/internal/version"
)

// Options say what Install replaces and how far it may go.
type Options struct {
	// Exe is the binary to replace (the running one, symlinks resolved).
	Exe string
	// Current is its version; GOOS and GOARCH its target.
	Current, GOOS, GOARCH string
	// AllowDowngrade installs a release older than Current, or any release
	// over a build whose version cannot be ordered (a development build).
	AllowDowngrade bool
	Client         *http.Client
}

// Result is what Install did.
type Result struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Exe     string `json:"exe"`
	Changed bool   `json:"changed"` // false: Current is the release already
	Signer  string `json:"signer"`  // the key that signed the release
	Archive string `json:"archive"`
}

// ErrDowngrade is the error Install returns for a release that is not
// newer, unless Options.AllowDowngrade.
var ErrDowngrade = errors.New("not newer")

// Install puts the release's binary for o.GOOS/o.GOARCH in place of o.Exe:
// downloaded into the same directory, checked against SHA256SUMS, run once
// (`version --json` must name the release and the target), then renamed
// over o.Exe, so that o.Exe is at every moment either the old binary or
// the new one. A release equal to o.Current changes nothing.
func Install(ctx context.Context, r *Release, o Options) (*Result, error) {
	res := &Result{From: o.Current, To: r.Version, Exe: o.Exe, Signer: r.Signer.Describe(),
		Archive: ArchiveName(r.Version, o.GOOS, o.GOARCH)}
	c, ordered := Compare(o.Current, r.Version)
	switch {
	case ordered && c == 0:
		return res, nil
	case !ordered && !o.AllowDowngrade:
		return nil, fmt.Errorf("%w: this hostlink is %q, a build whose version cannot be ordered against releases; "+
			"pass --allow-downgrade to replace it with %s anyway", ErrDowngrade, o.Current, r.Version)
	case c > 0 && !o.AllowDowngrade:
		return nil, fmt.Errorf("%w: the release at %s is %s, older than this hostlink %s; pass --allow-downgrade to install it anyway",
			ErrDowngrade, r.URL, r.Version, o.Current)
	}
	if o.Client == nil {
		o.Client = Client()
	}
	dir := filepath.Dir(o.Exe)
	removeOld(o.Exe)

	archive, err := os.CreateTemp("", "hostlink-update-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(archive.Name())
	defer archive.Close()
	if err := r.download(ctx, o.Client, res.Archive, archive); err != nil {
		return nil, err
	}

	// The new binary, next to the old one so that the rename is atomic.
	next, err := os.CreateTemp(dir, ".hostlink-update-*"+filepath.Ext(o.Exe))
	if err != nil {
		return nil, fmt.Errorf("cannot write in %s, where hostlink is (%w); update as the user who installed it", dir, err)
	}
	placed := false
	defer func() {
		if !placed {
			next.Close()
			os.Remove(next.Name())
		}
	}()
	name := "hostlink"
	if o.GOOS == "windows" {
		name += ".exe"
	}
	if err := extract(archive, o.GOOS == "windows", name, next); err != nil {
		return nil, fmt.Errorf("%s: %w", res.Archive, err)
	}
	if err := next.Chmod(0o755); err != nil {
		return nil, err
	}
	if err := next.Sync(); err != nil {
		return nil, err
	}
	if err := next.Close(); err != nil {
		return nil, err
	}
	if err := checkRuns(ctx, next.Name(), r.Version, o.GOOS+"/"+o.GOARCH); err != nil {
		return nil, err
	}
	if err := replace(next.Name(), o.Exe); err != nil {
		return nil, fmt.Errorf("replacing %s: %w", o.Exe, err)
	}
	placed = true
	res.Changed = true
	return res, nil
}

// checkRuns runs the new binary's `version --json`: it must start here and
// say it is the release and target SHA256SUMS promised.
func checkRuns(ctx context.Context, bin, want, target string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := run(ctx, filepath.Dir(bin), bin, "version", "--json")
	if err != nil {
		return fmt.Errorf("the downloaded hostlink does not run here: %w", err)
	}
	var info version.Info
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return fmt.Errorf("the downloaded hostlink's version --json: %w", err)
	}
	if info.Version != want || info.Target != target {
		return fmt.Errorf("the downloaded hostlink says it is %s for %s, not %s for %s", info.Version, info.Target, want, target)
	}
	return nil
}

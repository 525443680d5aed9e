// Package version says which hostlink this is: the release version, the
// commit it was built from, when, with which Go and for which target.
//
// Release builds set Version, Commit and Date with -ldflags -X (see
// .goreleaser.yaml); every other build takes them from the build
// information the Go toolchain embeds (the module version for
// `go install ...@vX.Y.Z`, the VCS revision and time for a build in a
// clone), so no build says less than it knows.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at link time by release builds:
//
//	-X github.com/hostlink/hostlink/internal/version.Version=1.2.3
//	-X github.com/hostlink/hostlink/internal/version.Commit=<full hash>
//	-X github.com/hostlink/hostlink/internal/version.Date=<commit time, RFC 3339>
//
// They are vars, not consts, because -X can only set package-level string
// variables. When a release build did not set them, init fills them from
// the build information, so that every reader of Version (the HELLO's
// shim_version, MCP's serverInfo, status) sees the same string.
var (
	Version string
	Commit  string
	Date    string
)

// modified is whether the build's VCS tree had uncommitted changes.
var modified bool

// devel is the version of a build with neither -X nor a module version
// (go build in a directory without VCS information, or go run).
const devel = "devel"

func init() {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if Version == "" {
			Version = devel
		}
		return
	}
	fill(bi)
}

// fill completes Version, Commit and Date from bi where -X left them empty.
func fill(bi *debug.BuildInfo) {
	var rev, vcsTime string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			vcsTime = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if Version == "" {
		Version = moduleVersion(bi.Main.Version)
	}
	if Commit == "" {
		Commit = rev
	}
	if Date == "" {
		Date = vcsTime
	}
}

// moduleVersion is the main module's version without its "v" (releases are
// tagged vX.Y.Z and GoReleaser's version is X.Y.Z), or devel when the
// toolchain recorded none.
func moduleVersion(v string) string {
	if v == "" || v == "(devel)" {
		return devel
	}
	return strings.TrimPrefix(v, "v")
}

// Info is everything hostlink says about its build.
type Info struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"` // built from a tree with uncommitted changes
	Date     string `json:"date,omitempty"`     // the commit's time, RFC 3339 (releases are built at it)
	Go       string `json:"go"`
	Target   string `json:"target"` // GOOS/GOARCH
}

// Get returns this binary's Info.
func Get() Info {
	return Info{
		Version:  Version,
		Commit:   Commit,
		Modified: modified,
		Date:     Date,
		Go:       runtime.Version(),
		Target:   runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// Summary is Info on one line: "0.2.0 (commit 1a2b3c4d5e6f, 2026-11-01T12:00:00Z, go1.26.8, linux/amd64)".
func (i Info) Summary() string {
	parts := []string{}
	if i.Commit != "" {
		c := "commit " + short(i.Commit)
		if i.Modified {
			c += " modified"
		}
		parts = append(parts, c)
	}
	if i.Date != "" {
		parts = append(parts, i.Date)
	}
	parts = append(parts, i.Go, i.Target)
	return fmt.Sprintf("%s (%s)", i.Version, strings.Join(parts, ", "))
}

// Long is Info for people, one field a line, as `hostlink version` prints it.
func (i Info) Long() string {
	var b strings.Builder
	fmt.Fprintf(&b, "hostlink %s\n", i.Version)
	commit := i.Commit
	switch {
	case commit == "":
		commit = "unknown (built without VCS information)"
	case i.Modified:
		commit += " (with uncommitted changes)"
	}
	date := i.Date
	if date == "" {
		date = "unknown"
	}
	fmt.Fprintf(&b, "  commit  %s\n", commit)
	fmt.Fprintf(&b, "  date    %s\n", date)
	fmt.Fprintf(&b, "  go      %s\n", i.Go)
	fmt.Fprintf(&b, "  target  %s\n", i.Target)
	return b.String()
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

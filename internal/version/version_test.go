package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFill(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs.revision", Value: "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"},
		{Key: "vcs.time", Value: "2026-11-01T12:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	tests := []struct {
		name                  string
		ldVersion, ldCommit   string
		main                  string
		settings              []debug.BuildSetting
		version, commit, date string
		modified              bool
	}{
		{name: "go run, no VCS", main: "(devel)", version: "devel"},
		{name: "go install @version", main: "v1.2.3", version: "1.2.3"},
		{name: "clone build", main: "v0.0.0-20261101120000-1a2b3c4d5e6f+dirty", settings: vcs,
			version: "0.0.0-20261101120000-1a2b3c4d5e6f+dirty", commit: vcs[0].Value, date: vcs[1].Value, modified: true},
		{name: "release: -X wins", ldVersion: "0.2.0", ldCommit: "feedface", main: "(devel)", settings: vcs,
			version: "0.2.0", commit: "feedface", date: vcs[1].Value, modified: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Version, Commit, Date, modified = tt.ldVersion, tt.ldCommit, "", false
			t.Cleanup(func() { Version, Commit, Date, modified = "", "", "", false })
			fill(&debug.BuildInfo{Main: debug.Module{Path: "github.com/hostlink/hostlink", Version: tt.main}, Settings: tt.settings})
			got := Get()
			if got.Version != tt.version || got.Commit != tt.commit || got.Date != tt.date || got.Modified != tt.modified {
				t.Errorf("got %+v, want version %q commit %q date %q modified %v", got, tt.version, tt.commit, tt.date, tt.modified)
			}
		})
	}
}

func TestRender(t *testing.T) {
	full := Info{Version: "0.2.0", Commit: "1a2b3c4d5e6f7a8b9c0d", Modified: true, Date: "2026-11-01T12:00:00Z", Go: "go1.26.8", Target: "linux/amd64"}
	if got, want := full.Summary(), "0.2.0 (commit 1a2b3c4d5e6f modified, 2026-11-01T12:00:00Z, go1.26.8, linux/amd64)"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	bare := Info{Version: "devel", Go: "go1.26.8", Target: "windows/arm64"}
	if got, want := bare.Summary(), "devel (go1.26.8, windows/arm64)"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	long := full.Long()
	for _, want := range []string{"hostlink 0.2.0\n", "commit  1a2b3c4d5e6f7a8b9c0d (with uncommitted changes)\n", "date    2026-11-01T12:00:00Z\n", "go      go1.26.8\n", "target  linux/amd64\n"} {
		if !strings.Contains(long, want) {
			t.Errorf("Long() lacks %q:\n%s", want, long)
		}
	}
	if long := bare.Long(); !strings.Contains(long, "commit  unknown") || !strings.Contains(long, "date    unknown") {
		t.Errorf("Long() of a bare build:\n%s", long)
	}
}

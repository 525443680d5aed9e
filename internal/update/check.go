package update

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
)

// CheckInterval is how often the daemon looks for a newer release.
const CheckInterval = 24 * time.Hour

// Checker looks for a newer release: once when Run starts, then every
// Interval. Each check is two GETs, of the latest release's SHA256SUMS and
// its signature; the version is believed only once the signature verifies.
type Checker struct {
	URL      string   // the latest release's directory (DefaultURL)
	Signers  []Signer // ReleaseSigners, unless configured otherwise
	Current  string   // this hostlink's version
	Command  string   // how to update (UpdateCommand)
	Interval time.Duration
	Client   *http.Client
	Log      *slog.Logger // where each check's outcome is logged; nil: nowhere

	mu sync.Mutex
	st apitype.UpdateStatus
}

// Run checks until ctx ends.
func (c *Checker) Run(ctx context.Context) {
	if c.Interval <= 0 {
		c.Interval = CheckInterval
	}
	for {
		c.Check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(c.Interval):
		}
	}
}

// Check checks once and records the result.
func (c *Checker) Check(ctx context.Context) apitype.UpdateStatus {
	client := c.Client
	if client == nil {
		client = Client()
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	r, err := Fetch(ctx, client, c.URL, c.Signers)
	now := time.Now().UTC().Truncate(time.Second)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.CheckedAt = &now
	if err != nil {
		c.st.Error = err.Error()
		if c.Log != nil {
			c.Log.Warn("update check failed", "url", c.URL, "err", err)
		}
		return c.status()
	}
	c.st.Error = ""
	c.st.Latest = r.Version
	cmp, ok := Compare(c.Current, r.Version)
	c.st.Available = ok && cmp < 0
	if c.st.Available && c.Log != nil {
		c.Log.Info("a newer hostlink is available", "current", c.Current, "latest", r.Version, "update", c.Command)
	}
	return c.status()
}

// Status is the last check's result.
func (c *Checker) Status() *apitype.UpdateStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.status()
	return &st
}

func (c *Checker) status() apitype.UpdateStatus {
	st := c.st
	st.URL, st.Current, st.Command = c.URL, c.Current, c.Command
	return st
}

// UpdateCommand is what updates the installation at exe: its package
// manager's command, or `hostlink update`.
func UpdateCommand(exe string) string {
	if m := ManagedExe(exe); m != nil {
		return m.Command
	}
	return "hostlink update"
}

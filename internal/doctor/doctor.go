package doctor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/config"
	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/version"
)

// Status is a check's outcome.
type Status string

const (
	OK   Status = "OK"
	Warn Status = "WARN"
	Fail Status = "FAIL"
)

// Check is one line of the report.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Report is everything doctor found.
type Report struct {
	OK       bool    `json:"ok"` // no check failed
	Failures int     `json:"failures"`
	Warnings int     `json:"warnings"`
	Checks   []Check `json:"checks"`
}

// Options configure Run.
type Options struct {
	// ConfigPath is an explicit config file ("" for the per-OS default).
	ConfigPath string
	// Platform is the link URL to check (default: config's link.url, else
	// the paired platform).
	Platform string
	// HTTPClient reaches the platform (default: 10 s timeout).
	HTTPClient *http.Client
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
}

// env is what the checks share.
type env struct {
	o    Options
	dirs paths.Dirs
	cfg  *config.Config
	// configPath is the configuration file in force, which fixes name.
	configPath string
	r          *Report
	// status is the running daemon's, if one answered.
	status *apitype.Status
}

func (e *env) add(name string, st Status, detail, fix string) {
	e.r.Checks = append(e.r.Checks, Check{Name: name, Status: st, Detail: detail, Fix: fix})
	switch st {
	case Fail:
		e.r.Failures++
	case Warn:
		e.r.Warnings++
	}
}

// Run runs every check.
func Run(ctx context.Context, o Options) *Report {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	e := &env{o: o, r: &Report{Checks: []Check{}}}
	e.add("version", OK, "hostlink "+version.Get().Summary(), "")
	if e.checkPaths() && e.checkConfig() {
		e.checkDirs()
		e.checkWorkdirs()
		e.checkLog()
		st := e.checkCredentials(ctx)
		e.checkLink(ctx, st)
		e.checkControl(ctx)
		e.checkCapabilities(ctx)
		e.checkAgents(ctx)
		e.checkAutostart()
		e.checkUpdate(ctx)
	}
	e.r.OK = e.r.Failures == 0
	return e.r
}

// Print writes the report for people: one line per check, the fix below.
func Print(w io.Writer, r *Report) {
	for _, c := range r.Checks {
		fmt.Fprintf(w, "%-4s  %-22s %s\n", c.Status, c.Name, c.Detail)
		if c.Fix != "" {
			for _, l := range strings.Split(c.Fix, "\n") {
				fmt.Fprintf(w, "      %-22s fix: %s\n", "", l)
			}
		}
	}
	fmt.Fprintf(w, "\n%d failed, %d warnings, %d checks\n", r.Failures, r.Warnings, len(r.Checks))
}

func (e *env) checkPaths() bool {
	dirs, err := paths.Resolve()
	if err != nil {
		e.add("directories", Fail, err.Error(), "set HOME (or %USERPROFILE% and %LOCALAPPDATA% on Windows), or HOSTLINK_HOME to an absolute directory")
		return false
	}
	e.dirs = dirs
	return true
}

func (e *env) checkConfig() bool {
	path, explicit := e.o.ConfigPath, e.o.ConfigPath != ""
	if !explicit {
		path = e.dirs.ConfigFile()
	}
	cfg, err := config.Load(path, explicit)
	if err != nil {
		e.add("config", Fail, err.Error(), "correct the key named above in "+path+" (hostlink defaults prints every key with its default)")
		return false
	}
	e.cfg, e.configPath = cfg, path
	if _, err := os.Stat(path); err != nil {
		e.add("config", OK, path+" does not exist: built-in defaults", "")
	} else {
		e.add("config", OK, path, "")
	}
	return true
}

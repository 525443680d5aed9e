package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// daemon is a `hostlink serve` process: Streamable HTTP on a loopback port
// of its choosing, optionally linked to a platform.
type daemon struct {
	cmd   *exec.Cmd
	url   string // http://127.0.0.1:port/mcp
	token string
	env   []string
}

// startDaemon runs hostlink serve with home as HOSTLINK_HOME and HOME (the
// platform's folder browser starts at HOME), serving root as the
// workdir, commands enabled, and with extra arguments (a platform link).
func startDaemon(ctx context.Context, bin, home, root string, extra ...string) (*daemon, error) {
	return startDaemonWith(ctx, bin, home, root, "", nil, extra...)
}

// startDaemonWith is startDaemon with more config.toml (appended to the
// benchmark's) and more environment.
func startDaemonWith(ctx context.Context, bin, home, root, config string, moreEnv []string, extra ...string) (*daemon, error) {
	if err := writeHostlinkConfig(home); err != nil {
		return nil, err
	}
	if config != "" {
		f, err := os.OpenFile(filepath.Join(home, "config", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		_, err = f.WriteString(config)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	env := append(append(baseEnv(home), "HOSTLINK_HOME="+home), moreEnv...)
	args := append([]string{"serve", "--allowed-root", root, "--listen", "127.0.0.1:0", "--enable-shell"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Dir = home
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &daemon{cmd: cmd, env: env}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if stderrSink != nil {
				fmt.Fprintln(stderrSink, line)
			}
			if _, rest, ok := strings.Cut(line, "serving MCP at "); ok {
				select {
				case addr <- strings.TrimSpace(rest):
				default:
				}
			}
		}
	}()
	select {
	case d.url = <-addr:
	case <-time.After(30 * time.Second):
		d.close()
		return nil, errors.New("hostlink serve did not report its address within 30s")
	case <-ctx.Done():
		d.close()
		return nil, ctx.Err()
	}
	c := exec.Command(bin, "token")
	c.Env = env
	tok, err := c.Output()
	if err != nil {
		d.close()
		return nil, fmt.Errorf("hostlink token: %w", err)
	}
	d.token = strings.TrimSpace(string(tok))
	return d, nil
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

func (d *daemon) close() {
	if d.cmd.Process != nil {
		killTree(d.cmd.Process.Pid)
	}
	_ = d.cmd.Wait()
}

// bearer adds the daemon's token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connect opens one Streamable HTTP client session (MCP Go SDK) to d.
func (d *daemon) connect(ctx context.Context) (*mcp.ClientSession, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}
	hc := &http.Client{Transport: bearer{d.token, tr}}
	client := mcp.NewClient(&mcp.Implementation{Name: "hostlink-bench", Version: "0.1.0"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.url, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
}

// writeHostlinkConfig writes the benchmark's config.toml into home: limits
// raised so that one call covers each scenario, as it does for the peers,
// and an allow-all policy, so that the benchmark measures the operations
// rather than a wait for the user.
func writeHostlinkConfig(home string) error {
	if err := os.MkdirAll(filepath.Join(home, "config"), 0o700); err != nil {
		return err
	}
	_ = os.MkdirAll(filepath.Join(home, "tmp"), 0o700)
	// A daemon `hostlink mcp` starts listens on an ephemeral port too.
	cfg := "[server]\nlisten = \"127.0.0.1:0\"\n[limits]\nmax_list_entries = 100000\nmax_search_matches = 100000\n" +
		"[policy]\nfiles_write = \"allow\"\ncommands = \"allow\"\ncommands_unsandboxed = \"allow\"\ncomputer = \"allow\"\nagents = \"allow\"\nplatform_folders = \"allow\"\n"
	return os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(cfg), 0o600)
}

// rssSampler records the peak VmRSS of one process while it runs.
type rssSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak int64
}

func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{stop: make(chan struct{})}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if n, err := procRSS(pid); err == nil && n > s.peak {
				s.peak = n
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// end stops sampling and returns the peak in MiB.
func (s *rssSampler) end() float64 {
	close(s.stop)
	s.done.Wait()
	return float64(s.peak) / (1 << 20)
}

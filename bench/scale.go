package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/devplatform"
)

// The scale scenarios load one `hostlink serve` daemon the way several
// agents at once would. No peer has a daemon, an HTTP endpoint or a
// platform link, so each is compared with its limit: the same work done
// directly, or by the best dedicated tool (fd, rg). They drive the daemon
// with the MCP Go SDK client (Streamable HTTP) in this process, so on a
// small machine the clients compete with the daemon for the CPU; the
// limits run in this process too.

// scaleConfig sizes the scale scenarios.
type scaleConfig struct {
	HTTPClients int   `json:"http_clients"`
	HTTPCalls   int   `json:"http_calls_per_client"`
	TreeFiles   int   `json:"tree_files"`
	TreeReps    int   `json:"reps_tree"`
	CmdBytes    int64 `json:"command_output_bytes"`
	CmdReps     int   `json:"reps_command"`
	Sessions    int   `json:"platform_sessions"`
	SessionOps  int   `json:"ops_per_session"` // write+read pairs
	LongCalls   int   `json:"long_session_calls"`
	AgentTurns  int   `json:"agent_turns"`
}

func fullScale() scaleConfig {
	return scaleConfig{HTTPClients: 32, HTTPCalls: 200, TreeFiles: 1000000, TreeReps: 3,
		CmdBytes: 1 << 30, CmdReps: 3, Sessions: 8, SessionOps: 100, LongCalls: 10000, AgentTurns: 20}
}

func quickScale() scaleConfig {
	return scaleConfig{HTTPClients: 4, HTTPCalls: 5, TreeFiles: 2000, TreeReps: 1,
		CmdBytes: 4 << 20, CmdReps: 1, Sessions: 2, SessionOps: 3, LongCalls: 60, AgentTurns: 2}
}

// metric is one measured quantity.
type metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// scaleResult is one scale scenario: hostlink's figures, the limit's, and
// the scenario's target with its verdict.
type scaleResult struct {
	Key       string   `json:"key"`
	Title     string   `json:"title"`
	Hostlink  []metric `json:"hostlink"`
	Limit     []metric `json:"limit,omitempty"`
	LimitDesc string   `json:"limit_desc,omitempty"`
	Target    string   `json:"target,omitempty"`
	Met       *bool    `json:"met,omitempty"`
	Error     string   `json:"error,omitempty"`
}

func (r *scaleResult) verdict(ok bool) { r.Met = &ok }

// runScale runs the scale scenarios against one daemon serving root.
func runScale(ctx context.Context, sc scaleConfig, runs func(key string) bool, bin, tmp, root string) ([]*scaleResult, int) {
	var out []*scaleResult
	failed := 0
	add := func(r *scaleResult, err error) {
		if err != nil {
			r.Error = err.Error()
			failed++
			logf("scale %s: %v", r.Key, err)
		} else {
			logf("scale %s done", r.Key)
		}
		out = append(out, r)
	}
	small := filepath.Join(root, "scale-small.txt")
	must(os.WriteFile(small, lines(4096, 11), 0o644))

	d, err := startDaemon(ctx, bin, filepath.Join(tmp, "home-daemon"), root)
	if err != nil {
		add(&scaleResult{Key: "http_concurrent", Title: "hostlink serve"}, err)
		return out, failed
	}
	defer d.close()

	if runs("http_concurrent") {
		r := &scaleResult{Key: "http_concurrent", Title: fmt.Sprintf("%d concurrent Streamable HTTP clients, %d × read 4 KiB each", sc.HTTPClients, sc.HTTPCalls)}
		add(r, scaleHTTP(ctx, r, sc, d, small))
	}
	if runs("tree_find") || runs("tree_search") {
		logf("scale: generating a %d-file tree…", sc.TreeFiles)
		t0 := time.Now()
		tree, err := generateScaleTree(filepath.Join(root, "scale-tree"), sc.TreeFiles)
		must(err)
		logf("scale: tree ready in %s", time.Since(t0).Round(time.Millisecond))
		if runs("tree_find") {
			rf := &scaleResult{Key: "tree_find", Title: fmt.Sprintf("find_files **/*.go over %d files (%d matches)", tree.files, tree.globN)}
			add(rf, scaleFind(ctx, rf, sc, d, tree))
		}
		if runs("tree_search") {
			rs := &scaleResult{Key: "tree_search", Title: fmt.Sprintf("search_text for a literal over %d files (%d files match)", tree.files, tree.needleN)}
			add(rs, scaleSearch(ctx, rs, sc, d, tree))
		}
		// The tree is large; it goes before the next scenarios use the disk.
		os.RemoveAll(tree.dir)
	}
	if runs("cmd_huge_output") {
		rc := &scaleResult{Key: "cmd_huge_output", Title: fmt.Sprintf("run_command printing %s", human(int(sc.CmdBytes)))}
		add(rc, scaleCommand(ctx, rc, sc, d, tmp))
	}
	if runs("long_session") {
		rl := &scaleResult{Key: "long_session", Title: fmt.Sprintf("one session, %d mixed calls (read, write, stat, list, search, `true`)", sc.LongCalls)}
		add(rl, scaleLongSession(ctx, rl, sc, d, root))
	}
	if runs("agent_turn") {
		ra := &scaleResult{Key: "agent_turn", Title: "a trivial Codex turn as a hostlink agent task (submit, poll until terminal)"}
		if clis := os.Getenv("HOSTLINK_AGENT_CLIS"); clis == "" {
			ra.Target = "skipped: HOSTLINK_AGENT_CLIS (the node_modules holding the Codex CLI) is not set"
			add(ra, nil)
		} else {
			add(ra, scaleAgentTurn(ctx, ra, sc, bin, tmp, clis))
		}
	}
	if runs("platform_sessions") {
		rp := &scaleResult{Key: "platform_sessions", Title: fmt.Sprintf("%d concurrent platform sessions, %d × (write 4 KiB + read it) each", sc.Sessions, sc.SessionOps)}
		add(rp, scalePlatform(ctx, rp, sc, bin, tmp))
	}
	return out, failed
}

func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(p*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// scaleHTTP: N sessions each read a 4 KiB file M times, all at once.
func scaleHTTP(ctx context.Context, r *scaleResult, sc scaleConfig, d *daemon, small string) error {
	args := map[string]any{"path": filepath.Base(small)}
	sessions := make([]*mcp.ClientSession, sc.HTTPClients)
	for i := range sessions {
		cs, err := d.connect(ctx)
		if err != nil {
			return fmt.Errorf("client %d: connect: %w", i, err)
		}
		defer cs.Close()
		sessions[i] = cs
		for range 5 { // warm up
			if _, err := callOK(ctx, cs, "read_file", args); err != nil {
				return err
			}
		}
	}
	// One client alone first: the latency the others are measured against.
	var alone []float64
	for range sc.HTTPCalls {
		t := time.Now()
		if _, err := callOK(ctx, sessions[0], "read_file", args); err != nil {
			return err
		}
		alone = append(alone, ms(time.Since(t)))
	}
	before, _ := procRSS(d.pid())
	rss := sampleRSS(d.pid())
	lat := make([][]float64, len(sessions))
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range sc.HTTPCalls {
				t := time.Now()
				if _, err := callOK(ctx, cs, "read_file", args); err != nil {
					errs[i] = err
					return
				}
				lat[i] = append(lat[i], ms(time.Since(t)))
			}
		}()
	}
	t := time.Now()
	close(start)
	wg.Wait()
	wall := time.Since(t)
	peak := rss.end()
	after, _ := procRSS(d.pid())
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var all []float64
	for _, l := range lat {
		all = append(all, l...)
	}
	total := float64(len(all))
	r.Hostlink = []metric{
		{"throughput", total / wall.Seconds(), "calls/s"},
		{"p50", percentile(all, 0.5), "ms"},
		{"p99", percentile(all, 0.99), "ms"},
		{"one client alone p50", percentile(alone, 0.5), "ms"},
		{"one client alone throughput", 1000 / percentile(alone, 0.5), "calls/s"},
		{"daemon RSS before", mib(before), "MiB"},
		{"daemon RSS peak", peak, "MiB"},
		{"daemon RSS after", mib(after), "MiB"},
	}
	// Limit: the same reads done directly by as many goroutines.
	t = time.Now()
	var lwg sync.WaitGroup
	for range sc.HTTPClients {
		lwg.Add(1)
		go func() {
			defer lwg.Done()
			for range sc.HTTPCalls {
				os.ReadFile(small)
			}
		}()
	}
	lwg.Wait()
	r.Limit = []metric{{"throughput", total / time.Since(t).Seconds(), "calls/s"}}
	r.LimitDesc = fmt.Sprintf("%d goroutines × os.ReadFile", sc.HTTPClients)
	r.Target = "throughput ≥ one client's; daemon RSS peak ≤ before + 64 MiB"
	r.verdict(total/wall.Seconds() >= 1000/percentile(alone, 0.5) && peak <= mib(before)+64)
	return nil
}

// callOK calls a tool and fails on an error result.
func callOK(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		return nil, fmt.Errorf("%s: tool error: %s", tool, truncate(resultText(res), 300))
	}
	return res, nil
}

// scaleTree is the generated large tree.
type scaleTree struct {
	dir                   string
	rel                   string // relative to the workdir
	files, globN, needleN int
}

// generateScaleTree writes n files of one short line each: 100 per leaf
// directory, 10 leaves per top directory; every 100th file is .go and
// every 1000th holds the needle. Two writers share the work.
func generateScaleTree(dir string, n int) (*scaleTree, error) {
	t := &scaleTree{dir: dir, rel: filepath.Base(dir), files: n}
	body := []byte("line 00000001 the quick brown fox jumps over the lazy dog.\n")
	withNeedle := append(append([]byte(nil), body...), []byte("here is the "+needle+" again\n")...)
	for i := range n {
		if i%100 == 7 {
			t.globN++
		}
		if i%1000 == 3 {
			t.needleN++
		}
	}
	const workers = 2
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for leaf := w; leaf*100 < n; leaf += workers {
				sub := filepath.Join(dir, fmt.Sprintf("d%04d", leaf/10), fmt.Sprintf("s%d", leaf%10))
				if err := os.MkdirAll(sub, 0o755); err != nil {
					errs[w] = err
					return
				}
				for i := leaf * 100; i < min(n, leaf*100+100); i++ {
					ext, content := "txt", body
					if i%100 == 7 {
						ext = "go"
					}
					if i%1000 == 3 {
						content = withNeedle
					}
					if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%07d.%s", i, ext)), content, 0o644); err != nil {
						errs[w] = err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	return t, errors.Join(errs...)
}

// timedCall runs one tool call on a fresh look at the daemon's RSS and
// returns its time (ms), the text and the RSS peak during it (MiB).
func timedCall(ctx context.Context, cs *mcp.ClientSession, pid int, tool string, args map[string]any) (float64, string, float64, error) {
	rss := sampleRSS(pid)
	t := time.Now()
	res, err := callOK(ctx, cs, tool, args)
	el := ms(time.Since(t))
	peak := rss.end()
	if err != nil {
		return 0, "", 0, err
	}
	return el, resultText(res), peak, nil
}

// timedExec runs a command line, counts its output lines and returns the
// time in ms.
func timedExec(name string, args ...string) (float64, int, error) {
	c := exec.Command(name, args...)
	var out bytes.Buffer
	c.Stdout = &out
	t := time.Now()
	err := c.Run()
	el := ms(time.Since(t))
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", name, err)
	}
	return el, bytes.Count(out.Bytes(), []byte("\n")), nil
}

var goFile = regexp.MustCompile(`f\d{7}\.go`)

func distinct(xs []string) int {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return len(m)
}

func scaleFind(ctx context.Context, r *scaleResult, sc scaleConfig, d *daemon, tree *scaleTree) error {
	cs, err := d.connect(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	args := map[string]any{"path": tree.rel, "pattern": "**/*.go", "max_results": 100000}
	fd, _ := exec.LookPath("fdfind")
	if fd == "" {
		fd, _ = exec.LookPath("fd")
	}
	before, _ := procRSS(d.pid())
	var hl, lim []float64
	peak := 0.0
	for range sc.TreeReps {
		el, text, p, err := timedCall(ctx, cs, d.pid(), "find_files", args)
		if err != nil {
			return err
		}
		if n := distinct(goFile.FindAllString(text, -1)); n != tree.globN {
			return fmt.Errorf("find_files returned %d of %d matches", n, tree.globN)
		}
		hl, peak = append(hl, el), max(peak, p)
		if fd != "" {
			el, n, err := timedExec(fd, "--no-ignore", "-g", "*.go", tree.dir)
			if err != nil {
				return err
			}
			if n != tree.globN {
				return fmt.Errorf("fd found %d of %d", n, tree.globN)
			}
			lim = append(lim, el)
		}
	}
	r.Hostlink = []metric{{"median", percentile(hl, 0.5), "ms"}, {"daemon RSS before", mib(before), "MiB"}, {"daemon RSS peak", peak, "MiB"}}
	r.Target = "≤ 1.5× fd; daemon RSS peak ≤ before + 256 MiB"
	if fd == "" {
		r.LimitDesc = "fd not installed (apt: fd-find)"
		return nil
	}
	r.Limit = []metric{{"median", percentile(lim, 0.5), "ms"}}
	r.LimitDesc = "fdfind --no-ignore -g '*.go' (process spawn included)"
	r.verdict(percentile(hl, 0.5) <= 1.5*percentile(lim, 0.5) && peak <= mib(before)+256)
	return nil
}

func scaleSearch(ctx context.Context, r *scaleResult, sc scaleConfig, d *daemon, tree *scaleTree) error {
	cs, err := d.connect(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	args := map[string]any{"path": tree.rel, "query": needle, "max_matches": 100000}
	rg, _ := exec.LookPath("rg")
	before, _ := procRSS(d.pid())
	var hl, lim []float64
	peak := 0.0
	for range sc.TreeReps {
		el, text, p, err := timedCall(ctx, cs, d.pid(), "search_text", args)
		if err != nil {
			return err
		}
		if n := strings.Count(text, needle); n < tree.needleN {
			return fmt.Errorf("search_text found %d of %d", n, tree.needleN)
		}
		hl, peak = append(hl, el), max(peak, p)
		if rg != "" {
			el, n, err := timedExec(rg, "--no-config", "-F", "-l", needle, tree.dir)
			if err != nil {
				return err
			}
			if n != tree.needleN {
				return fmt.Errorf("rg found %d of %d", n, tree.needleN)
			}
			lim = append(lim, el)
		}
	}
	r.Hostlink = []metric{{"median", percentile(hl, 0.5), "ms"}, {"daemon RSS before", mib(before), "MiB"}, {"daemon RSS peak", peak, "MiB"}}
	r.Target = "≤ 1.5× rg; daemon RSS peak ≤ before + 256 MiB"
	if rg == "" {
		r.LimitDesc = "rg not installed"
		return nil
	}
	r.Limit = []metric{{"median", percentile(lim, 0.5), "ms"}}
	r.LimitDesc = "rg --no-config -F -l (process spawn included)"
	r.verdict(percentile(hl, 0.5) <= 1.5*percentile(lim, 0.5) && peak <= mib(before)+256)
	return nil
}

// scaleCommand: a command printing CmdBytes through run_command, against
// the same command writing to a file.
func scaleCommand(ctx context.Context, r *scaleResult, sc scaleConfig, d *daemon, tmp string) error {
	cs, err := d.connect(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	line := fmt.Sprintf("yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c %d", sc.CmdBytes)
	args := map[string]any{"command": line, "shell": "sh", "timeout_seconds": 1800}
	out := filepath.Join(tmp, "cmd-output.bin")
	before, _ := procRSS(d.pid())
	var hl, lim []float64
	peak := 0.0
	for range sc.CmdReps {
		el, text, p, err := timedCall(ctx, cs, d.pid(), "run_command", args)
		if err != nil {
			return err
		}
		var res struct {
			Stdout struct {
				Bytes int64 `json:"bytes"`
			} `json:"stdout"`
		}
		if err := json.Unmarshal([]byte(text), &res); err != nil || res.Stdout.Bytes != sc.CmdBytes {
			return fmt.Errorf("run_command reported %d stdout bytes, want %d (%v)", res.Stdout.Bytes, sc.CmdBytes, err)
		}
		hl, peak = append(hl, el), max(peak, p)
		el, _, err = timedExec("sh", "-c", line+" > "+out)
		if err != nil {
			return err
		}
		lim = append(lim, el)
		os.Remove(out)
	}
	mbps := func(msv float64) float64 { return float64(sc.CmdBytes) / (1 << 20) / (msv / 1000) }
	h, l := percentile(hl, 0.5), percentile(lim, 0.5)
	r.Hostlink = []metric{{"median", h, "ms"}, {"throughput", mbps(h), "MiB/s"}, {"daemon RSS before", mib(before), "MiB"}, {"daemon RSS peak", peak, "MiB"}}
	r.Limit = []metric{{"median", l, "ms"}, {"throughput", mbps(l), "MiB/s"}}
	r.LimitDesc = "the same command, stdout redirected to a file"
	r.Target = "throughput ≥ 85% of the limit's; daemon RSS peak ≤ before + 64 MiB"
	r.verdict(mbps(h) >= 0.85*mbps(l) && peak <= mib(before)+64)
	return nil
}

// platform is a running `hostlink dev-platform`.
type platform struct {
	cmd   *exec.Cmd
	addr  string
	token string
	hc    *http.Client
}

func startPlatform(ctx context.Context, bin, dir string) (*platform, error) {
	tokFile, addrFile := filepath.Join(dir, "platform-token"), filepath.Join(dir, "platform-addr")
	cmd := exec.Command(bin, "dev-platform", "--listen", "127.0.0.1:0", "--token-file", tokFile, "--addr-file", addrFile)
	cmd.Stderr = stderrSink
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &platform{cmd: cmd, hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			p.addr = strings.TrimSpace(string(b))
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.close()
			return nil, errors.New("dev-platform did not report its address")
		}
	}
	tok, err := os.ReadFile(tokFile)
	if err != nil {
		p.close()
		return nil, err
	}
	p.token = strings.TrimSpace(string(tok))
	return p, nil
}

func (p *platform) close() {
	killTree(p.cmd.Process.Pid)
	_ = p.cmd.Wait()
}

// api calls the dev-platform's HTTP API and decodes the reply into out.
func (p *platform) api(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+p.addr+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := p.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("dev-platform %s %s: HTTP %d: %s", method, path, resp.StatusCode, truncate(string(b), 300))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// send sends one message to a session and checks the reply's type.
func (p *platform) send(ctx context.Context, peer, typ string, payload any, want string) error {
	pb, _ := json.Marshal(payload)
	var env struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := p.api(ctx, "POST", "/api/send", devplatform.SendRequest{Peer: peer, Type: typ, Payload: pb}, &env); err != nil {
		return err
	}
	if env.Type != want {
		return fmt.Errorf("%s: got %s %s", typ, env.Type, truncate(string(env.Payload), 300))
	}
	return nil
}

// scalePlatform: sessions each write a 4 KiB file and read it back, first
// one session alone, then all at once.
func scalePlatform(ctx context.Context, r *scaleResult, sc scaleConfig, bin, tmp string) error {
	pdir := filepath.Join(tmp, "platform")
	if err := os.MkdirAll(pdir, 0o700); err != nil {
		return err
	}
	p, err := startPlatform(ctx, bin, pdir)
	if err != nil {
		return err
	}
	defer p.close()
	home := filepath.Join(tmp, "home-linked")
	root := filepath.Join(home, "workspace")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	d, err := startDaemon(ctx, bin, home, root, "--platform", "ws://"+p.addr+devplatform.ControlPath,
		"--platform-token-file", filepath.Join(pdir, "platform-token"))
	if err != nil {
		return err
	}
	defer d.close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var peers []devplatform.PeerInfo
		if err := p.api(ctx, "GET", "/api/peers", nil, &peers); err == nil && len(peers) > 0 {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the daemon did not connect to the dev-platform")
		}
	}
	content := string(lines(4096, 12))
	folders := make([]string, sc.Sessions)
	for i := range folders {
		folders[i] = filepath.Join(home, fmt.Sprintf("session-%d", i))
		if err := os.MkdirAll(folders[i], 0o755); err != nil {
			return err
		}
		if err := p.api(ctx, "POST", "/api/attach", devplatform.AttachRequest{SessionID: fmt.Sprintf("bench-%d", i), Path: folders[i]}, nil); err != nil {
			return err
		}
	}
	// run does ops write+read pairs in session i; it returns pairs/s.
	run := func(i, ops int) (float64, error) {
		sid, file := fmt.Sprintf("bench-%d", i), filepath.Join(folders[i], "f.txt")
		t := time.Now()
		for range ops {
			if err := p.send(ctx, sid, "FILE_WRITE", map[string]any{"path": file, "content": content}, "ACK"); err != nil {
				return 0, err
			}
			if err := p.send(ctx, sid, "FILE_READ", map[string]any{"path": file}, "FILE_CONTENTS"); err != nil {
				return 0, err
			}
		}
		return float64(ops) / time.Since(t).Seconds(), nil
	}
	if _, err := run(0, 3); err != nil { // warm up
		return err
	}
	alone, err := run(0, sc.SessionOps)
	if err != nil {
		return err
	}
	before, _ := procRSS(d.pid())
	rss := sampleRSS(d.pid())
	per := make([]float64, sc.Sessions)
	errs := make([]error, sc.Sessions)
	var wg sync.WaitGroup
	t := time.Now()
	for i := range sc.Sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			per[i], errs[i] = run(i, sc.SessionOps)
		}()
	}
	wg.Wait()
	wall := time.Since(t)
	peak := rss.end()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	sum := 0.0
	for _, x := range per {
		sum += x
	}
	mean := sum / float64(len(per))
	r.Hostlink = []metric{
		{"one session alone", alone, "pairs/s"},
		{"per session, all at once (mean)", mean, "pairs/s"},
		{"per session ÷ alone", mean / alone, "×"},
		{"aggregate", float64(sc.Sessions*sc.SessionOps) / wall.Seconds(), "pairs/s"},
		{"daemon RSS before", mib(before), "MiB"},
		{"daemon RSS peak", peak, "MiB"},
	}
	// Limit: the same writes and reads done directly, one session's worth.
	file := filepath.Join(tmp, "platform-limit.txt")
	lt := time.Now()
	for range sc.SessionOps {
		os.WriteFile(file, []byte(content), 0o644)
		os.ReadFile(file)
	}
	r.Limit = []metric{{"one session alone", float64(sc.SessionOps) / time.Since(lt).Seconds(), "pairs/s"}}
	r.LimitDesc = "os.WriteFile + os.ReadFile (no fsync, no platform)"
	r.Target = fmt.Sprintf("aggregate ≥ one session alone (the daemon serves sessions in parallel); reported: per session ÷ alone (ideal on %d cores: ≥ %.2f×)",
		runtime.NumCPU(), min(1, float64(runtime.NumCPU())/float64(sc.Sessions)))
	r.verdict(float64(sc.Sessions*sc.SessionOps)/wall.Seconds() >= alone)
	return nil
}

// scaleMarkdown renders the scale results.
func scaleMarkdown(results []*scaleResult) string {
	var b strings.Builder
	b.WriteString("| scenario | hostlink | limit | target | verdict |\n|---|---|---|---|---|\n")
	for _, r := range results {
		verdict := "—"
		switch {
		case r.Error != "":
			verdict = "**ERROR**"
		case r.Met != nil && *r.Met:
			verdict = "met"
		case r.Met != nil:
			verdict = "**not met**"
		}
		lim := metricsText(r.Limit)
		if r.LimitDesc != "" {
			lim = strings.TrimPrefix(lim+" ("+r.LimitDesc+")", " ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Title, metricsText(r.Hostlink), lim, r.Target, verdict)
	}
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(&b, "\n- **%s: ERROR** %s\n", r.Key, truncate(r.Error, 400))
		}
	}
	return b.String()
}

func metricsText(ms []metric) string {
	var parts []string
	for _, m := range ms {
		v := fmtNum(m.Value)
		if m.Unit == "×" {
			v = fmt.Sprintf("%.2f×", m.Value)
		} else {
			v += " " + m.Unit
		}
		parts = append(parts, m.Name+" "+v)
	}
	return strings.Join(parts, "; ")
}

func fmtNum(x float64) string {
	switch {
	case x < 0:
		return "−" + fmtNum(-x)
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

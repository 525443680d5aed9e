package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// cell is one server's (or the limit's) result in one scenario.
type cell struct {
	Tools   string    `json:"tools,omitempty"`
	Summary *summary  `json:"summary,omitempty"`
	Samples []float64 `json:"samples,omitempty"`
	CPU     *cpuMeans `json:"cpu,omitempty"`
	// Bytes is the size of what the tools returned in the last run: the
	// content of each result as JSON, summed over a scenario's calls.
	Bytes *int64 `json:"response_bytes,omitempty"`
	NA    string `json:"na,omitempty"`
	Error string `json:"error,omitempty"`
}

type result struct {
	Key   string           `json:"key"`
	Title string           `json:"title"`
	Cells map[string]*cell `json:"cells"` // server name or "limit"
}

var errTimeout = errors.New("timeout")

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "[%s] "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
}

// clientResults is one client's table.
type clientResults struct {
	Client  string    `json:"client"`
	Version string    `json:"version"`
	Results []*result `json:"results"`
}

// runAll generates the data set and runs every scenario through each
// client in turn.
func runAll(ctx context.Context, cfg config, clients []client, servers []*server, root string) (*report, int) {
	rep := newReport(cfg, servers)
	logf("generating data (%d-entry directory, %d-file tree)…", cfg.ListN, cfg.TreeN)
	t0 := time.Now()
	treeN := cfg.TreeN
	if !cfg.runs("glob") && !cfg.runs("search") {
		treeN = 0 // a partial run without the tree scenarios skips the slow part
	}
	d, err := generate(root, cfg.ListN, treeN, cfg.BigBytes)
	must(err)
	logf("data ready in %s", time.Since(t0).Round(time.Millisecond))
	rep.Data = d
	failed := 0
	for _, cl := range clients {
		logf("client %s %s", cl.Name(), cl.Version())
		res, n := runClient(ctx, cfg, cl, servers, d)
		rep.Clients = append(rep.Clients, &clientResults{Client: cl.Name(), Version: cl.Version(), Results: res})
		rep.Versions[cl.Name()+" client"] = cl.Version()
		failed += n
	}
	return rep, failed
}

// runClient runs every scenario of cfg through cl, servers alternating.
func runClient(ctx context.Context, cfg config, cl client, servers []*server, d *dataset) ([]*result, int) {
	var results []*result
	failed := 0
	logf := func(format string, a ...any) { logf("%s: "+format, append([]any{cl.Name()}, a...)...) }

	// Cold start: spawn → initialized → first tools/list answered. For
	// hostlink this starts its daemon too (`hostlink mcp` starts one when
	// none runs; closing the session ends the process tree, daemon
	// included); cold_start_daemon measures the front end with a daemon
	// running.
	if cfg.runs("cold_start") {
		cold := &result{Key: "cold_start", Title: "cold start (spawn → initialize → tools/list)", Cells: map[string]*cell{}}
		samples := map[string][]float64{}
		for i := 0; i < cfg.Cold; i++ {
			for k := range servers {
				s := servers[(i+k)%len(servers)]
				if c := cold.Cells[s.Name]; c != nil && c.Error != "" {
					continue
				}
				var ss session
				el, err := timeOp(&ss, func() error {
					var err error
					if ss, err = cl.start(ctx, s); err == nil {
						err = ss.listTools(ctx)
					}
					return err
				})
				if ss != nil {
					ss.close()
				}
				if err != nil {
					cold.Cells[s.Name] = &cell{Error: err.Error()}
					failed++
					continue
				}
				samples[s.Name] = append(samples[s.Name], ms(el))
			}
		}
		for _, s := range servers {
			if cold.Cells[s.Name] == nil {
				cold.Cells[s.Name] = &cell{Tools: "initialize + tools/list", Summary: summarize(samples[s.Name], "ms"), Samples: samples[s.Name]}
			}
		}
		cold.Cells["limit"] = &cell{NA: "no direct equivalent"}
		results = append(results, cold)
		results = append(results, coldStartDaemon(ctx, cfg, cl, servers, &failed))
		logf("cold start done")
	}

	// Idle RSS of the server's process tree after init and after N calls.
	sc := cfg.scenarios(cl, d, servers)
	var read4 *scenario
	for _, s := range sc {
		if s.Key == "read_4k" {
			read4 = s
		}
	}
	if cfg.runs("rss_init") || cfg.runs("rss_after_calls") {
		rInit := &result{Key: "rss_init", Title: "idle RSS of the process tree after initialize", Cells: map[string]*cell{}}
		rAfter := &result{Key: "rss_after_calls", Title: fmt.Sprintf("idle RSS after %d calls (4 KiB reads)", cfg.RSSCalls), Cells: map[string]*cell{}}
		if !rssSupported() {
			for _, s := range servers {
				rInit.Cells[s.Name] = &cell{NA: "RSS is read from /proc (Linux only)"}
				rAfter.Cells[s.Name] = &cell{NA: "RSS is read from /proc (Linux only)"}
			}
		} else {
			si, sa := map[string][]float64{}, map[string][]float64{}
			for i := 0; i < cfg.RSSReps; i++ {
				for k := range servers {
					s := servers[(i+k)%len(servers)]
					if rAfter.Cells[s.Name] != nil {
						continue
					}
					a, b, err := measureRSS(ctx, cl, s, read4.ops[s.Name], cfg.RSSCalls)
					if err != nil {
						rAfter.Cells[s.Name] = &cell{Error: err.Error()}
						rInit.Cells[s.Name] = &cell{Error: err.Error()}
						failed++
						continue
					}
					si[s.Name] = append(si[s.Name], a)
					sa[s.Name] = append(sa[s.Name], b)
				}
			}
			for _, s := range servers {
				if rInit.Cells[s.Name] == nil {
					rInit.Cells[s.Name] = &cell{Tools: "RSS of the /proc tree, shared file pages once", Summary: summarize(si[s.Name], "MiB"), Samples: si[s.Name]}
					rAfter.Cells[s.Name] = &cell{Tools: read4.tools[s.Name] + " ×" + fmt.Sprint(cfg.RSSCalls), Summary: summarize(sa[s.Name], "MiB"), Samples: sa[s.Name]}
				}
			}
		}
		rInit.Cells["limit"] = &cell{NA: "no direct equivalent"}
		rAfter.Cells["limit"] = &cell{NA: "no direct equivalent"}
		results = append(results, rInit, rAfter)
		logf("idle RSS done")
	}

	// Warm scenarios: one live session per server, servers alternating per repetition.
	sess := map[string]session{}
	for _, s := range servers {
		ss, err := cl.start(ctx, s)
		if err == nil {
			err = ss.listTools(ctx)
		}
		if err != nil {
			logf("%s: %v", s.Name, err)
			failed++
			continue
		}
		sess[s.Name] = ss
	}
	defer func() {
		for _, ss := range sess {
			ss.close()
		}
	}()
	for _, scn := range sc {
		if !cfg.runs(scn.Key) {
			continue
		}
		r := &result{Key: scn.Key, Title: scn.Title, Cells: map[string]*cell{}}
		samples := map[string][]float64{}
		type runner struct {
			name string
			ss   session // nil for the limit
			fn   func(context.Context) error
		}
		var runners []runner
		for _, s := range servers {
			if reason, ok := scn.na[s.Name]; ok {
				r.Cells[s.Name] = &cell{NA: reason}
				continue
			}
			o, ss := scn.ops[s.Name], sess[s.Name]
			if o == nil || ss == nil {
				r.Cells[s.Name] = &cell{Error: "server not running"}
				continue
			}
			runners = append(runners, runner{s.Name, ss, func(c context.Context) error { return o(c, ss) }})
		}
		if scn.limit != nil {
			lim := scn.limit
			runners = append(runners, runner{"limit", nil, func(context.Context) error { return lim() }})
		} else {
			r.Cells["limit"] = &cell{NA: "no direct equivalent"}
		}
		spent := map[string]time.Duration{}
		// timed runs one op under the per-op timeout. A timeout is reported in
		// the cell; it fails the run only in quick mode (where it means a hang).
		cpu := map[string]*cpuSplit{}
		size := map[string]int64{}
		timed := func(rn runner) (time.Duration, error) {
			c, cancel := context.WithTimeout(ctx, cfg.OpTimeout)
			defer cancel()
			ss := rn.ss
			var s0, c0 time.Duration
			if ss != nil {
				received(scn, rn.name, ss) // what earlier work received is not this run's
				s0, c0 = treeCPU(ss.pid()), procCPU(ss.clientPID())
			}
			el, err := timeOp(&ss, func() error { return rn.fn(c) })
			if ss != nil {
				cs := cpu[rn.name]
				if cs == nil {
					cs = &cpuSplit{}
					cpu[rn.name] = cs
				}
				cs.add(el, treeCPU(ss.pid())-s0, procCPU(ss.clientPID())-c0)
				size[rn.name] = received(scn, rn.name, ss)
			}
			spent[rn.name] += el
			if err != nil && c.Err() != nil {
				err = fmt.Errorf("timeout: did not finish within %s (%v)", cfg.OpTimeout, err)
				if cfg.Mode != "quick" {
					r.Cells[rn.name] = &cell{Error: err.Error(), Tools: scn.tools[rn.name]}
					return el, errTimeout
				}
			}
			return el, err
		}
		if cfg.Warmup && scn.reps >= 10 {
			for _, rn := range runners {
				_, err := timed(rn)
				delete(cpu, rn.name) // the warm-up is not part of the breakdown
				if err == errTimeout {
					continue
				} else if err != nil {
					r.Cells[rn.name] = &cell{Error: err.Error()}
					failed++
				}
			}
		}
		for i := 0; i < scn.reps; i++ {
			for k := range runners {
				rn := runners[(i+k)%len(runners)]
				if c := r.Cells[rn.name]; c != nil && c.Error != "" {
					continue
				}
				// Keep full mode bounded: stop repeating a server that has used
				// its time budget in this scenario (it keeps its samples).
				if len(samples[rn.name]) > 0 && spent[rn.name] > cfg.Budget {
					continue
				}
				el, err := timed(rn)
				if err == errTimeout {
					continue
				}
				if err != nil {
					r.Cells[rn.name] = &cell{Error: err.Error()}
					failed++
					continue
				}
				samples[rn.name] = append(samples[rn.name], ms(el))
			}
		}
		for _, rn := range runners {
			if r.Cells[rn.name] == nil {
				tools := scn.tools[rn.name]
				if rn.name == "limit" {
					tools = scn.limitD
				}
				c := &cell{Tools: tools, Summary: summarize(samples[rn.name], "ms"), Samples: samples[rn.name], CPU: cpu[rn.name].mean()}
				if n, ok := size[rn.name]; ok {
					c.Bytes = &n
				}
				r.Cells[rn.name] = c
			}
		}
		results = append(results, r)
		logf("%s done", scn.Key)
	}
	return results, failed
}

// received is what the tools returned to server name's session in scn
// since the last look: on ss, or on the session of scn's own for it.
func received(scn *scenario, name string, ss session) int64 {
	if f := scn.received[name]; f != nil {
		return f()
	}
	return ss.received()
}

// idleSettle is how long a server is left without a call before its idle
// RSS is read: an idle server is one between a model's turns, and hostlink
// gives back the memory of a burst of calls a second after the last one
// (package memtrim). Every server waits the same.
const idleSettle = 2 * time.Second

// measureRSS starts a fresh server, measures its tree's RSS after
// initialization, runs calls, and measures again (MiB).
func measureRSS(ctx context.Context, cl client, s *server, o op, calls int) (float64, float64, error) {
	ss, err := cl.start(ctx, s)
	if err != nil {
		return 0, 0, err
	}
	defer ss.close()
	if err := ss.listTools(ctx); err != nil {
		return 0, 0, err
	}
	time.Sleep(idleSettle)
	a, err := treeRSS(ss.pid())
	if err != nil {
		return 0, 0, err
	}
	if o == nil {
		return 0, 0, fmt.Errorf("%s: no 4 KiB read tool", s.Name)
	}
	for i := 0; i < calls; i++ {
		if err := o(ctx, ss); err != nil {
			return 0, 0, err
		}
	}
	time.Sleep(idleSettle)
	b, err := treeRSS(ss.pid())
	if err != nil {
		return 0, 0, err
	}
	return float64(a) / (1 << 20), float64(b) / (1 << 20), nil
}

// coldStartDaemon is hostlink's stdio cold start with its daemon already
// running (`hostlink serve` on the same home, which the front end connects
// to); a peer has no daemon.
func coldStartDaemon(ctx context.Context, cfg config, cl client, servers []*server, failed *int) *result {
	res := &result{Key: "cold_start_daemon", Title: "cold start with the daemon running (hostlink mcp forwarding to it)", Cells: map[string]*cell{}}
	for _, s := range servers {
		if s.Name != "hostlink" {
			res.Cells[s.Name] = &cell{NA: "no daemon: every client starts its own server"}
			continue
		}
		// Command is bin mcp --allowed-root ROOT --enable-shell.
		d, err := startDaemon(ctx, s.Command[0], s.home, s.Command[3])
		if err != nil {
			res.Cells[s.Name] = &cell{Error: err.Error()}
			*failed++
			continue
		}
		var samples []float64
		for i := 0; i < cfg.Cold; i++ {
			var ss session
			el, err := timeOp(&ss, func() error {
				var err error
				if ss, err = cl.start(ctx, s); err == nil {
					err = ss.listTools(ctx)
				}
				return err
			})
			if ss != nil {
				ss.close()
			}
			if err != nil {
				res.Cells[s.Name] = &cell{Error: err.Error()}
				*failed++
				break
			}
			samples = append(samples, ms(el))
		}
		d.close()
		if res.Cells[s.Name] == nil {
			res.Cells[s.Name] = &cell{Tools: "initialize + tools/list", Summary: summarize(samples, "ms"), Samples: samples}
		}
	}
	res.Cells["limit"] = &cell{NA: "no direct equivalent"}
	return res
}

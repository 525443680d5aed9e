package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

type machine struct {
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	CPU      string `json:"cpu"`
	Cores    int    `json:"cores"`
	RAMBytes int64  `json:"ram_bytes"`
	Kernel   string `json:"kernel"`
}

type report struct {
	Started  string            `json:"started"`
	Config   config            `json:"config"`
	Machine  machine           `json:"machine"`
	Versions map[string]string `json:"versions"`
	Servers  []*server         `json:"servers"`
	Data     *dataset          `json:"data"`
	Clients  []*clientResults  `json:"clients,omitempty"`
	// Scale holds the scale scenarios' results, when they ran.
	ScaleConfig *scaleConfig   `json:"scale_config,omitempty"`
	Scale       []*scaleResult `json:"scale,omitempty"`
	names       []string
}

func newReport(cfg config, servers []*server) *report {
	r := &report{Started: time.Now().UTC().Format(time.RFC3339), Config: cfg, Servers: servers,
		Machine: machineInfo(), Versions: map[string]string{"go (bench driver)": runtime.Version()}}
	for _, s := range servers {
		r.Versions[s.Name] = s.Version
		r.names = append(r.names, s.Name)
	}
	r.Versions["node"] = firstLine("node", "--version")
	r.Versions["rg"] = firstLine("rg", "--version")
	return r
}

func firstLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "not found"
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

func machineInfo() machine {
	m := machine{OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, ln := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(ln, "MemTotal:") {
				var kb int64
				fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(ln, "MemTotal:")), "%d", &kb)
				m.RAMBytes = kb * 1024
			}
		}
	}
	m.Kernel = firstLine("uname", "-sr")
	return m
}

func fmtVal(s *summary) string {
	f := func(x float64) string {
		switch {
		case x >= 100:
			return fmt.Sprintf("%.0f", x)
		case x >= 10:
			return fmt.Sprintf("%.1f", x)
		}
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%s / %s %s", f(s.Median), f(s.P90), s.Unit)
}

func cellText(c *cell) string {
	switch {
	case c == nil:
		return "—"
	case strings.HasPrefix(c.Error, "timeout"):
		return "timeout"
	case c.Error != "":
		return "ERROR"
	case c.NA != "":
		return "n/a"
	case c.Summary == nil:
		return "—"
	}
	return fmtVal(c.Summary)
}

func ratio(a, b *cell) string {
	if a == nil || b == nil || a.Summary == nil || b.Summary == nil || b.Summary.Median == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a.Summary.Median/b.Summary.Median)
}

func (r *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## hostlink benchmark (%s mode, %s)\n\n", r.Config.Mode, r.Started)
	fmt.Fprintf(&b, "Machine: %s, %d cores, %.1f GiB RAM, %s (%s/%s)\n\n", r.Machine.CPU, r.Machine.Cores,
		float64(r.Machine.RAMBytes)/(1<<30), r.Machine.Kernel, r.Machine.OS, r.Machine.Arch)
	fmt.Fprintf(&b, "Versions:")
	for _, k := range append(append([]string{}, r.names...), "node", "rg", "go (bench driver)") {
		fmt.Fprintf(&b, " %s `%s`;", k, r.Versions[k])
	}
	for _, k := range r.clientNames() {
		fmt.Fprintf(&b, " %s `%s`;", k, r.Versions[k])
	}
	b.WriteString("\n\nCells are median / p90. Ratios are hostlink median ÷ the other median (below 1 = hostlink faster or smaller). " +
		"Each client drives every server the same way; times are as an application embedding that client sees them.\n")
	for _, c := range r.Clients {
		fmt.Fprintf(&b, "\n### Client: %s %s\n\n", c.Client, c.Version)
		b.WriteString(r.table(c.Results))
	}
	if len(r.Scale) > 0 {
		b.WriteString("\n### Scale: one `hostlink serve` daemon under load (no peer has these; compared with the limit)\n\n")
		b.WriteString(scaleMarkdown(r.Scale))
	}
	if len(r.Clients) == 0 {
		return b.String()
	}
	b.WriteString("\nEcho floor: hostlink has no echo tool and the benchmark does not add one; its cheapest tool, " +
		"`list_workdirs` (no arguments, no file access, but validated and audited like every call), is the transport floor. " +
		"The peers' rows use their cheapest tools for comparison.\n")
	return b.String()
}

func (r *report) clientNames() []string {
	var out []string
	for _, c := range r.Clients {
		out = append(out, c.Client+" client")
	}
	return out
}

// table renders one client's results: the table, the tools used, the
// targets and what was not measured.
func (r *report) table(results []*result) string {
	var b strings.Builder
	h := r.names[0]
	b.WriteString("| scenario | n | " + h)
	for _, p := range r.names[1:] {
		fmt.Fprintf(&b, " | %s | %s/%s", p, h, p)
	}
	fmt.Fprintf(&b, " | limit | %s/limit |\n|---|---|---", h)
	for range r.names[1:] {
		b.WriteString("|---|---")
	}
	b.WriteString("|---|---|\n")
	var notes []string
	for _, res := range results {
		hc := res.Cells[h]
		n := 0
		if hc != nil && hc.Summary != nil {
			n = hc.Summary.N
		}
		fmt.Fprintf(&b, "| %s | %d | %s", res.Title, n, cellText(hc))
		for _, p := range r.names[1:] {
			fmt.Fprintf(&b, " | %s | %s", cellText(res.Cells[p]), ratio(hc, res.Cells[p]))
		}
		fmt.Fprintf(&b, " | %s | %s |\n", cellText(res.Cells["limit"]), ratio(hc, res.Cells["limit"]))
		for _, name := range append(append([]string{}, r.names...), "limit") {
			c := res.Cells[name]
			if c == nil {
				continue
			}
			if strings.HasPrefix(c.Error, "timeout") {
				notes = append(notes, fmt.Sprintf("- %s / %s: %s", res.Key, name, truncate(c.Error, 400)))
			} else if c.Error != "" {
				notes = append(notes, fmt.Sprintf("- **%s / %s: ERROR** %s", res.Key, name, truncate(c.Error, 400)))
			} else if c.NA != "" && name != "limit" {
				notes = append(notes, fmt.Sprintf("- %s / %s: n/a — %s", res.Key, name, c.NA))
			}
		}
	}
	b.WriteString("\nTools used:\n\n")
	for _, res := range results {
		var parts []string
		for _, name := range append(append([]string{}, r.names...), "limit") {
			if c := res.Cells[name]; c != nil && c.Tools != "" {
				parts = append(parts, fmt.Sprintf("%s: `%s`", name, c.Tools))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(&b, "- %s — %s\n", res.Key, strings.Join(parts, "; "))
		}
	}
	if sz := r.sizes(results); sz != "" {
		b.WriteString("\nResponse size (bytes of what the tools returned: each result's content array as JSON, as the client received it; " +
			"for a scenario of several calls, their sum):\n\n" + sz)
	}
	if bd := r.breakdown(results); bd != "" {
		b.WriteString("\nWhere the time goes (means per call, ms: the wall time as timed, CPU used by the server's process tree " +
			"and by the client's process, and the rest, when neither was on a CPU: pipe and scheduler wake-ups, " +
			"or waiting for a core on a loaded machine):\n\n" + bd)
	}
	b.WriteString("\nTargets:\n\n")
	for _, t := range r.targets(results) {
		b.WriteString("- " + t + "\n")
	}
	if len(notes) > 0 {
		b.WriteString("\nNot measured / errors:\n\n" + strings.Join(notes, "\n") + "\n")
	}
	return b.String()
}

// sizes renders the response size of every scenario where one was measured.
func (r *report) sizes(results []*result) string {
	var b strings.Builder
	for _, res := range results {
		row, seen := "| "+res.Key, false
		for _, name := range r.names {
			c := res.Cells[name]
			switch {
			case c != nil && c.Bytes != nil:
				row += " | " + fmtBytes(*c.Bytes)
				seen = true
			case c != nil && c.NA != "":
				row += " | n/a"
			default:
				row += " | —"
			}
		}
		if !seen {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("| scenario | " + strings.Join(r.names, " | ") + " |\n|---" + strings.Repeat("|---", len(r.names)) + "|\n")
		}
		b.WriteString(row + " |\n")
	}
	return b.String()
}

// fmtBytes writes n in bytes with thousands separators.
func fmtBytes(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s + " B"
}

// breakdownKeys are the scenarios whose time is broken down in the report.
var breakdownKeys = []string{"echo_floor", "read_4k", "write_4k", "list_dir", "read_big"}

func (r *report) breakdown(results []*result) string {
	var b strings.Builder
	for _, res := range results {
		if !slices.Contains(breakdownKeys, res.Key) {
			continue
		}
		for _, name := range r.names {
			c := res.Cells[name]
			if c == nil || c.CPU == nil {
				continue
			}
			if b.Len() == 0 {
				b.WriteString("| scenario | server | wall | server CPU | client CPU | other |\n|---|---|---|---|---|---|\n")
			}
			m := c.CPU
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", res.Key, name, fmtNum(m.Wall), fmtNum(m.Server), fmtNum(m.Client), fmtNum(m.Other))
		}
	}
	return b.String()
}

func cellOf(results []*result, key, name string) *summary {
	for _, res := range results {
		if res.Key == key {
			if c := res.Cells[name]; c != nil {
				return c.Summary
			}
		}
	}
	return nil
}

// targets checks the goals against the medians.
func (r *report) targets(results []*result) []string {
	h := r.names[0]
	var out []string
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**not met**"
	}
	best := func(key string) (float64, string) {
		v, who := 0.0, ""
		for _, p := range r.names[1:] {
			if s := cellOf(results, key, p); s != nil && (who == "" || s.Median < v) {
				v, who = s.Median, p
			}
		}
		return v, who
	}
	if hs := cellOf(results, "cold_start", h); hs != nil {
		if v, who := best("cold_start"); who != "" {
			out = append(out, fmt.Sprintf("cold start, starting the daemon, ≤ 1/3 of the fastest peer (%s): %.2f× — %s", who, hs.Median/v, verdict(hs.Median <= v/3)))
		}
	}
	if hs := cellOf(results, "cold_start_daemon", h); hs != nil {
		if v, who := best("cold_start"); who != "" {
			out = append(out, fmt.Sprintf("cold start with the daemon running ≤ 1/3 of the fastest peer (%s): %.2f× — %s", who, hs.Median/v, verdict(hs.Median <= v/3)))
		}
	}
	if hs := cellOf(results, "rss_after_calls", h); hs != nil {
		if v, who := best("rss_after_calls"); who != "" {
			out = append(out, fmt.Sprintf("idle RSS ≤ 1/2 of the smallest peer (%s, after calls): %.2f× — %s", who, hs.Median/v, verdict(hs.Median <= v/2)))
		}
	}
	if a, b := cellOf(results, "read_4k", h), cellOf(results, "echo_floor", h); a != nil && b != nil {
		out = append(out, fmt.Sprintf("4 KiB read ≤ 1.5× hostlink's echo floor: %.2f× — %s", a.Median/b.Median, verdict(a.Median <= 1.5*b.Median)))
	}
	if a, b := cellOf(results, "search", h), cellOf(results, "search", "limit"); a != nil && b != nil {
		out = append(out, fmt.Sprintf("search ≤ 2× rg: %.2f× — %s", a.Median/b.Median, verdict(a.Median <= 2*b.Median)))
	}
	// Commands: an unsandboxed start within 3× of the same start done
	// directly, a sandboxed one within 1.5× of the unsandboxed one.
	for _, k := range []string{"cmd_true_argv", "cmd_true_shell", "cmd_trivial"} {
		if a, b := cellOf(results, k, h), cellOf(results, k, "limit"); a != nil && b != nil {
			out = append(out, fmt.Sprintf("%s unsandboxed ≤ 3× started directly: %.2f× — %s", k, a.Median/b.Median, verdict(a.Median <= 3*b.Median)))
		}
		if a, b := cellOf(results, k+"_sandboxed", h), cellOf(results, k, h); a != nil && b != nil {
			out = append(out, fmt.Sprintf("%s sandboxed ≤ 1.5× unsandboxed: %.2f× — %s", k, a.Median/b.Median, verdict(a.Median <= 1.5*b.Median)))
		}
	}
	var behind []string
	for _, res := range results {
		hc := res.Cells[h]
		if hc == nil || hc.Summary == nil {
			continue
		}
		if res.Key == "echo_floor" {
			continue
		}
		for _, p := range r.names[1:] {
			if c := res.Cells[p]; c != nil && c.Summary != nil && c.Summary.Median < hc.Summary.Median {
				behind = append(behind, fmt.Sprintf("%s vs %s (%.2f×)", res.Key, p, hc.Summary.Median/c.Summary.Median))
			}
		}
	}
	if len(behind) == 0 {
		out = append(out, "hostlink ahead of both peers on every measured scenario — met")
	} else {
		out = append(out, "hostlink ahead of both peers on every scenario — **not met**: behind on "+strings.Join(behind, ", "))
	}
	return out
}

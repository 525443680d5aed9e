package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	hlconfig "github.com/hostlink/hostlink/internal/config"
)

// config sets the sizes and repetitions of one run.
type config struct {
	Mode       string `json:"mode"`
	ListN      int    `json:"list_entries"`
	TreeN      int    `json:"tree_files"`
	BigBytes   int    `json:"big_file_bytes"`
	CmdBytes   int    `json:"command_output_bytes"`
	RSSCalls   int    `json:"rss_calls"`
	Warmup     bool   `json:"warmup"`
	Cold       int    `json:"reps_cold_start"`
	RSSReps    int    `json:"reps_rss"`
	Small      int    `json:"reps_small"` // echo, 4 KiB read/write, trivial command
	Big        int    `json:"reps_big"`   // 10 MiB read, listing
	Tree       int    `json:"reps_tree"`  // glob, search
	BigCommand int    `json:"reps_big_command"`
	// Budget: a server stops repeating a scenario once it has spent this long in it.
	Budget time.Duration `json:"budget_per_scenario_ns"`
	// OpTimeout: one call longer than this is reported as a timeout.
	OpTimeout time.Duration `json:"op_timeout_ns"`
	// Only: when not empty, the scenario keys to run (the rest are skipped).
	Only []string `json:"only,omitempty"`
}

// runs reports whether the scenario with this key is part of the run.
func (c *config) runs(key string) bool {
	return len(c.Only) == 0 || slices.Contains(c.Only, key)
}

func fullConfig() config {
	return config{Mode: "full", ListN: 10000, TreeN: 100000, BigBytes: 10 << 20, CmdBytes: 100 << 20,
		RSSCalls: 1000, Warmup: true, Cold: 10, RSSReps: 1, Small: 100, Big: 10, Tree: 5, BigCommand: 3,
		Budget: 60 * time.Second, OpTimeout: 150 * time.Second}
}

// quickConfig lists 2,500 entries: more than hostlink's default page, so
// that list_dir_pages follows the cursor in CI.
func quickConfig() config {
	return config{Mode: "quick", ListN: 2500, TreeN: 1000, BigBytes: 1 << 20, CmdBytes: 1 << 20,
		RSSCalls: 10, Cold: 1, RSSReps: 1, Small: 1, Big: 1, Tree: 1, BigCommand: 1,
		Budget: time.Minute, OpTimeout: 2 * time.Minute}
}

// op is one timed unit of work on a live session.
type op func(ctx context.Context, ss session) error

// scenario maps one piece of work onto each server's tools.
type scenario struct {
	Key    string
	Title  string
	reps   int
	ops    map[string]op     // server name -> op; missing = n/a
	tools  map[string]string // server name -> tools used (for the report)
	na     map[string]string // server name -> why n/a
	limit  func() error      // the same work done directly; nil = no limit
	limitD string
	// received, for a server whose op uses a session of its own rather
	// than the one it is given: that session's received.
	received map[string]func() int64
}

func (c *config) scenarios(cl client, d *dataset, servers []*server) []*scenario {
	abs := func(s *server, rel string) string {
		if s.Abs {
			return filepath.Join(d.Root, filepath.FromSlash(rel))
		}
		return rel
	}
	content4k := string(lines(4096, 9))
	cmdBig := fmt.Sprintf("yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c %d", c.CmdBytes)
	cmdSmall := "echo hi"
	treeAbs := filepath.Join(d.Root, d.Tree)
	globCount := regexp.MustCompile(`f\d{6}\.go`)

	mk := func(key, title string, reps int) *scenario {
		return &scenario{Key: key, Title: title, reps: reps, ops: map[string]op{}, tools: map[string]string{}, na: map[string]string{}}
	}
	echo := mk("echo_floor", "MCP echo floor (cheapest tool, no file access)", c.Small)
	read4 := mk("read_4k", "read a 4 KiB file", c.Small)
	read10 := mk("read_big", fmt.Sprintf("read a %s file", human(d.BigBytes)), c.Big)
	write4 := mk("write_4k", "write a 4 KiB file", c.Small)
	list := mk("list_dir", fmt.Sprintf("list a %d-entry directory", d.ListN), c.Big)
	page := listPage()
	listFirst := mk("list_dir_page", fmt.Sprintf("list a %d-entry directory: first page at hostlink's default page size (%d)", d.ListN, page), c.Big)
	listPages := mk("list_dir_pages", fmt.Sprintf("list a %d-entry directory: all of it through pages of %d (hostlink follows next_cursor)", d.ListN, page), c.Big)
	glob := mk("glob", fmt.Sprintf("find **/*.go in a %d-file tree (%d matches)", d.TreeN, d.GlobN), c.Tree)
	search := mk("search", fmt.Sprintf("search a literal in the %d-file tree (%d files match)", d.TreeN, d.NeedleN), c.Tree)
	cmd1 := mk("cmd_trivial", "run a trivial command (`echo hi` via sh), unsandboxed", c.Small)
	cmd1s := mk("cmd_trivial_sandboxed", "run a trivial command (`echo hi` via sh), sandboxed", c.Small)
	// Command start: `true` does nothing, so these rows are the cost of
	// starting a command, with and without a shell and a sandbox.
	trueArgv := mk("cmd_true_argv", "start `true` (argv, no shell), unsandboxed", c.Small)
	trueArgvS := mk("cmd_true_argv_sandboxed", "start `true` (argv, no shell), sandboxed", c.Small)
	trueSh := mk("cmd_true_shell", "start `true` through sh, unsandboxed", c.Small)
	trueShS := mk("cmd_true_shell_sandboxed", "start `true` through sh, sandboxed", c.Small)
	cmd2 := mk("cmd_big_output", fmt.Sprintf("run a command printing %s", human(c.CmdBytes)), c.BigCommand)

	wantGlob := func(text string) error {
		if n := len(globCount.FindAllString(text, -1)); n < d.GlobN {
			return fmt.Errorf("glob returned %d of %d matches", n, d.GlobN)
		}
		return nil
	}
	wantSearch := func(text string) error {
		if n := strings.Count(text, "f0"); n < d.NeedleN {
			return fmt.Errorf("search returned %d of %d files", n, d.NeedleN)
		}
		return nil
	}
	// call checks the result (when check is set) on its first successful
	// run in each session, which is the warm-up in full mode: the timed
	// runs then need not pass the result's text back.
	call := func(tool string, args map[string]any, check func(string) error) op {
		checked := map[session]bool{}
		return func(ctx context.Context, ss session) error {
			want := check != nil && !checked[ss]
			text, err := ss.call(ctx, tool, args, want)
			if err != nil || !want {
				return err
			}
			checked[ss] = true
			return check(text)
		}
	}
	set := func(sc *scenario, s *server, tool string, o op) {
		if !s.has(strings.Fields(tool)[0]) {
			sc.na[s.Name] = "no `" + strings.Fields(tool)[0] + "` tool in tools/list"
			return
		}
		sc.ops[s.Name] = o
		sc.tools[s.Name] = tool
	}

	for _, s := range servers {
		switch s.Name {
		case "hostlink":
			set(echo, s, "list_workdirs", call("list_workdirs", map[string]any{}, nil))
			set(read4, s, "read_file", call("read_file", map[string]any{"path": d.Small}, nil))
			set(read10, s, "read_file", call("read_file", map[string]any{"path": d.Big}, nil))
			set(write4, s, "write_file", call("write_file", map[string]any{"path": "writes/hostlink.txt", "content": content4k}, nil))
			set(list, s, "list_directory (max_entries 100000; limit raised in config.toml)", call("list_directory",
				map[string]any{"path": d.ListDir, "max_entries": 100000}, func(t string) error {
					if strings.Contains(t, `"next_cursor":"`) {
						return errors.New("listing was paginated")
					}
					return nil
				}))
			set(listFirst, s, fmt.Sprintf("list_directory (max_entries %d, the default limit)", page), call("list_directory",
				map[string]any{"path": d.ListDir, "max_entries": page}, func(t string) error {
					h, err := listHead(t)
					if err == nil && h.Count != min(page, d.ListN) {
						err = fmt.Errorf("first page has %d entries, want %d", h.Count, min(page, d.ListN))
					}
					return err
				}))
			set(listPages, s, fmt.Sprintf("list_directory (max_entries %d) + cursor until the last page", page), listAllPages(d.ListDir, page, d.ListN))
			set(glob, s, "find_files", call("find_files", map[string]any{"path": d.Tree, "pattern": "**/*.go", "max_results": 100000}, wantGlob))
			set(search, s, "search_text", call("search_text", map[string]any{"path": d.Tree, "query": d.Needle, "max_matches": 100000}, wantSearch))
			set(cmd1, s, "run_command (command+shell sh, sandbox off)", call("run_command", map[string]any{"command": cmdSmall, "shell": "sh", "sandbox": "off"}, nil))
			set(cmd1s, s, "run_command (command+shell sh, default sandbox)", call("run_command", map[string]any{"command": cmdSmall, "shell": "sh"}, nil))
			set(trueArgv, s, "run_command (argv, sandbox off)", call("run_command", map[string]any{"argv": []string{"true"}, "sandbox": "off"}, nil))
			set(trueArgvS, s, "run_command (argv, default sandbox)", call("run_command", map[string]any{"argv": []string{"true"}}, nil))
			set(trueSh, s, "run_command (command+shell sh, sandbox off)", call("run_command", map[string]any{"command": "true", "shell": "sh", "sandbox": "off"}, nil))
			set(trueShS, s, "run_command (command+shell sh, default sandbox)", call("run_command", map[string]any{"command": "true", "shell": "sh"}, nil))
			set(cmd2, s, "run_command (command+shell sh)", call("run_command", map[string]any{"command": cmdBig, "shell": "sh", "timeout_seconds": 600}, nil))
		case "server-filesystem":
			set(echo, s, "list_allowed_directories", call("list_allowed_directories", map[string]any{}, nil))
			rt := s.first("read_text_file", "read_file")
			set(read4, s, rt, call(rt, map[string]any{"path": abs(s, d.Small)}, nil))
			set(read10, s, rt, call(rt, map[string]any{"path": abs(s, d.Big)}, nil))
			set(write4, s, "write_file", call("write_file", map[string]any{"path": abs(s, "writes/fs.txt"), "content": content4k}, nil))
			set(list, s, "list_directory", call("list_directory", map[string]any{"path": abs(s, d.ListDir)}, nil))
			listFirst.na[s.Name] = "no pagination: its one call lists the whole directory (list_dir_pages)"
			set(listPages, s, "list_directory (one call, no pagination)", call("list_directory", map[string]any{"path": abs(s, d.ListDir)}, nil))
			set(glob, s, "search_files (glob)", call("search_files", map[string]any{"path": treeAbs, "pattern": "**/*.go"}, wantGlob))
			search.na[s.Name] = "no content-search tool (search_files matches names only)"
			cmd1.na[s.Name] = "no process tools"
			cmd1s.na[s.Name] = "no process tools"
			for _, sc := range []*scenario{trueArgv, trueArgvS, trueSh, trueShS, cmd2} {
				sc.na[s.Name] = "no process tools"
			}
		case "desktop-commander":
			set(echo, s, "list_sessions", call("list_sessions", map[string]any{}, nil))
			set(read4, s, "read_file", call("read_file", map[string]any{"path": abs(s, d.Small), "length": 100000000}, nil))
			set(read10, s, "read_file (length in lines, raised)", call("read_file", map[string]any{"path": abs(s, d.Big), "length": 100000000}, nil))
			set(write4, s, "write_file", call("write_file", map[string]any{"path": abs(s, "writes/dc.txt"), "content": content4k, "mode": "rewrite"}, nil))
			set(list, s, "list_directory (depth 1)", call("list_directory", map[string]any{"path": abs(s, d.ListDir), "depth": 1}, nil))
			listFirst.na[s.Name] = "no pagination: its one call lists the whole directory (list_dir_pages)"
			set(listPages, s, "list_directory (depth 1; one call, no pagination)", call("list_directory", map[string]any{"path": abs(s, d.ListDir), "depth": 1}, nil))
			set(glob, s, "start_search (files) + get_more_search_results until complete", dcSearch(map[string]any{
				"path": treeAbs, "pattern": "*.go", "searchType": "files", "ignoreCase": false}))
			set(search, s, "start_search (content, literal) + get_more_search_results until complete", dcSearch(map[string]any{
				"path": treeAbs, "pattern": d.Needle, "searchType": "content", "literalSearch": true, "ignoreCase": false, "contextLines": 0}))
			set(cmd1, s, "start_process", dcProcess(cmdSmall))
			cmd1s.na[s.Name] = "no sandbox (its blocklist is not one)"
			trueArgv.na[s.Name] = "start_process takes a shell command line only (no argv form)"
			trueArgvS.na[s.Name] = "start_process takes a shell command line only (no argv form)"
			set(trueSh, s, "start_process", dcProcess("true"))
			trueShS.na[s.Name] = "no sandbox (its blocklist is not one)"
			set(cmd2, s, "start_process", dcProcess(cmdBig))
		}
	}

	// Limits: the same work done directly by this Go program.
	read4.limit, read4.limitD = func() error { _, err := os.ReadFile(filepath.Join(d.Root, d.Small)); return err }, "os.ReadFile"
	read10.limit, read10.limitD = func() error { _, err := os.ReadFile(filepath.Join(d.Root, d.Big)); return err }, "os.ReadFile"
	write4.limit, write4.limitD = func() error {
		return os.WriteFile(filepath.Join(d.Root, "writes", "limit.txt"), []byte(content4k), 0o644)
	}, "os.WriteFile (no fsync)"
	list.limit, list.limitD = func() error { _, err := os.ReadDir(filepath.Join(d.Root, d.ListDir)); return err }, "os.ReadDir"
	// The first page in name order needs the whole directory read.
	listFirst.limit, listFirst.limitD = list.limit, "os.ReadDir (sorted: the whole directory)"
	listPages.limit, listPages.limitD = list.limit, list.limitD
	glob.limit, glob.limitD = func() error {
		n := 0
		err := filepath.WalkDir(treeAbs, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
				n++
			}
			return err
		})
		if err == nil && n != d.GlobN {
			err = fmt.Errorf("walk found %d", n)
		}
		return err
	}, "filepath.WalkDir"
	if rg, err := exec.LookPath("rg"); err == nil {
		search.limit, search.limitD = func() error {
			out, err := exec.Command(rg, "--no-config", "-F", "-l", d.Needle, treeAbs).Output()
			if err == nil && strings.Count(string(out), "\n") != d.NeedleN {
				err = fmt.Errorf("rg found %d files", strings.Count(string(out), "\n"))
			}
			return err
		}, "rg -F -l (process spawn included)"
	}
	execLimit := func(line string) func() error {
		return func() error {
			c := exec.Command("sh", "-c", line)
			c.Stdout = io.Discard
			return c.Run()
		}
	}
	cmd1.limit, cmd1.limitD = execLimit(cmdSmall), "exec sh -c"
	cmd1s.limit, cmd1s.limitD = execLimit(cmdSmall), "exec sh -c (unconfined)"
	cmd2.limit, cmd2.limitD = execLimit(cmdBig), "exec sh -c, stdout discarded"
	execTrue := func() error { return exec.Command("true").Run() }
	trueArgv.limit, trueArgv.limitD = execTrue, "exec true"
	trueArgvS.limit, trueArgvS.limitD = execTrue, "exec true (unconfined)"
	trueSh.limit, trueSh.limitD = execLimit("true"), "exec sh -c true"
	trueShS.limit, trueShS.limitD = execLimit("true"), "exec sh -c true (unconfined)"
	return append([]*scenario{echo, read4, read10, write4, list, listFirst, listPages, glob, search,
		trueArgv, trueArgvS, trueSh, trueShS, cmd1, cmd1s, cmd2}, c.desktopScenarios(cl, servers, mk)...)
}

// listPage is hostlink's default page size for list_directory: the
// default limits.max_list_entries, which the benchmark's config.toml raises
// so that list_dir is one call.
func listPage() int { return hlconfig.Default().Limits.MaxListEntries }

// listHeadLine is the first line of hostlink's list_directory text.
type listHeadLine struct {
	Count      int    `json:"count"`
	Truncated  bool   `json:"truncated"`
	NextCursor string `json:"next_cursor"`
}

func listHead(text string) (listHeadLine, error) {
	var h listHeadLine
	line, _, _ := strings.Cut(text, "\n")
	if err := json.Unmarshal([]byte(line), &h); err != nil {
		return h, fmt.Errorf("list_directory head line %q: %w", truncate(line, 200), err)
	}
	return h, nil
}

// listAllPages lists dir page by page, passing each page's next_cursor to
// the next call, until the last page; the pages must add up to want entries.
func listAllPages(dir string, page, want int) op {
	return func(ctx context.Context, ss session) error {
		args := map[string]any{"path": dir, "max_entries": page}
		n := 0
		for {
			t, err := ss.call(ctx, "list_directory", args, true)
			if err != nil {
				return err
			}
			h, err := listHead(t)
			if err != nil {
				return err
			}
			n += h.Count
			if h.NextCursor == "" {
				break
			}
			args = map[string]any{"path": dir, "max_entries": page, "cursor": h.NextCursor}
		}
		if n != want {
			return fmt.Errorf("pages listed %d of %d entries", n, want)
		}
		return nil
	}
}

var sessionRE = regexp.MustCompile(`session: (\S+)`)

// dcSearch runs a Desktop Commander search to completion: start_search
// returns after its first chunk (~40 ms), so the client polls
// get_more_search_results until the session says COMPLETED.
func dcSearch(args map[string]any) op {
	return func(ctx context.Context, ss session) error {
		t, err := ss.call(ctx, "start_search", args, true)
		if err != nil {
			return err
		}
		if strings.Contains(t, "Search completed") || strings.Contains(t, "Status: COMPLETED") {
			return nil
		}
		m := sessionRE.FindStringSubmatch(t)
		if m == nil {
			return fmt.Errorf("start_search: no session id in %q", truncate(t, 200))
		}
		deadline := time.Now().Add(5 * time.Minute)
		for time.Now().Before(deadline) {
			t, err := ss.call(ctx, "get_more_search_results", map[string]any{"sessionId": m[1], "offset": 0, "length": 1}, true)
			if err != nil {
				return err
			}
			if strings.Contains(t, "COMPLETED") {
				return nil
			}
			time.Sleep(2 * time.Millisecond)
		}
		return errors.New("search did not complete in 5 minutes")
	}
}

var pidRE = regexp.MustCompile(`PID (\d+)`)

// dcProcess runs a command with start_process, which returns when the
// process ends, blocks or timeout_ms passes; while it reports the process
// running, the client polls read_process_output until it has completed.
func dcProcess(line string) op {
	return func(ctx context.Context, ss session) error {
		t, err := ss.call(ctx, "start_process", map[string]any{"command": line, "timeout_ms": 600000, "shell": "/bin/sh"}, true)
		if err != nil {
			return err
		}
		if !strings.Contains(t, "Process is running") && !strings.Contains(t, "🔄") {
			return nil
		}
		m := pidRE.FindStringSubmatch(t)
		if m == nil {
			return fmt.Errorf("start_process: no PID in %q", truncate(t, 200))
		}
		var pid int
		fmt.Sscan(m[1], &pid)
		deadline := time.Now().Add(10 * time.Minute)
		for time.Now().Before(deadline) {
			t, err := ss.call(ctx, "read_process_output", map[string]any{"pid": pid, "timeout_ms": 1000}, true)
			if err != nil {
				return err
			}
			if strings.Contains(t, "Process completed") {
				return nil
			}
		}
		return errors.New("process did not complete in 10 minutes")
	}
}

func human(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

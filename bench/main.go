// Command hostlink-bench compares hostlink with the Node MCP servers people
// use today (server-filesystem, Desktop Commander) and with the direct
// limits, driving every server identically over stdio with each of the
// official MCP SDK clients people build on: the Go SDK (in this process) and
// the TypeScript SDK (tsdriver.mjs, a small Node program this harness drives).
// See bench/README or the "Benchmark" section of the top-level README.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	var (
		hostlinkBin = flag.String("hostlink", "", "hostlink binary (required)")
		nodeModules = flag.String("node-modules", "", "node_modules with the npm peers (required)")
		quick       = flag.Bool("quick", false, "every scenario once at small sizes (CI); fails only on errors")
		out         = flag.String("out", "bench/results", "directory for latest.{md,json} (quick.{md,json} with --quick)")
		dumpTools   = flag.Bool("dump-tools", false, "print each server's tools/list and exit")
	)
	verbose := flag.Bool("v", false, "show the servers' stderr")
	render := flag.String("render", "", "re-render the Markdown of a results JSON file (e.g. bench/results/latest.json) and exit")
	only := flag.String("only", "", "comma-separated scenario keys to run (e.g. list_dir,read_4k); results go to partial.{md,json}")
	scaleMode := flag.Bool("scale", false, "run the scale scenarios (one hostlink daemon under load; no peers) instead of the comparison; results go to scale.{md,json}")
	clientsFlag := flag.String("clients", "go,ts", "comma-separated MCP clients to drive the servers with: go (MCP Go SDK), ts (MCP TypeScript SDK)")
	flag.Parse()
	if *render != "" {
		b, err := os.ReadFile(*render)
		must(err)
		var rep report
		must(json.Unmarshal(b, &rep))
		for _, s := range rep.Servers {
			rep.names = append(rep.names, s.Name)
		}
		fmt.Print(rep.markdown())
		return
	}
	if *verbose {
		stderrSink = os.Stderr
	}
	if *hostlinkBin == "" || *nodeModules == "" {
		fmt.Fprintln(os.Stderr, "usage: hostlink-bench -hostlink BIN -node-modules DIR [--quick]")
		os.Exit(2)
	}
	ctx := context.Background()
	for _, p := range []*string{hostlinkBin, nodeModules} {
		a, err := filepath.Abs(*p)
		must(err)
		*p = a
	}
	tmp, err := os.MkdirTemp("", "hostlink-bench-")
	must(err)
	cleanup = func() { closeDesktops(); os.RemoveAll(tmp) }
	defer cleanup()
	// An interrupted run removes its data too: the scale tree alone is
	// 1,000,000 files.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		cleanup()
		fmt.Fprintln(os.Stderr, "hostlink-bench:", s)
		os.Exit(1)
	}()
	root := filepath.Join(tmp, "data")
	must(os.MkdirAll(root, 0o755))
	root, err = filepath.EvalSymlinks(root)
	must(err)
	servers := makeServers(*hostlinkBin, *nodeModules, tmp, root)
	var clients []client
	for _, name := range strings.Split(*clientsFlag, ",") {
		switch name {
		case "go":
			clients = append(clients, goClient{})
		case "ts":
			c, err := newTSClient(tmp, *nodeModules)
			must(err)
			clients = append(clients, c)
		default:
			must(fmt.Errorf("unknown client %q (want go or ts)", name))
		}
	}
	for _, s := range servers {
		if *scaleMode {
			break // no peers in the scale scenarios
		}
		ss, err := clients[0].start(ctx, s)
		must(err)
		must(ss.listTools(ctx))
		ss.close()
	}
	if *dumpTools {
		for _, s := range servers {
			fmt.Printf("== %s %s\n", s.Name, s.Version)
			for _, n := range s.ToolNames {
				fmt.Printf("  %s %s\n", n, s.Tools[n])
			}
		}
		return
	}
	cfg := fullConfig()
	if *quick {
		cfg = quickConfig()
	}
	if *only != "" {
		cfg.Only = strings.Split(*only, ",")
	}
	var rep *report
	failed := 0
	if !*scaleMode {
		rep, failed = runAll(ctx, cfg, clients, servers, root)
	} else {
		rep = newReport(cfg, servers)
		rep.Config.Mode = "scale"
	}
	// The scale scenarios run in their own mode, and at small sizes in
	// quick mode so that CI keeps them working.
	if *scaleMode || *quick {
		sc := fullScale()
		if *quick {
			sc = quickScale()
		}
		rep.ScaleConfig = &sc
		var n int
		rep.Scale, n = runScale(ctx, sc, cfg.runs, *hostlinkBin, tmp, root)
		failed += n
	}
	md := rep.markdown()
	fmt.Print(md)
	must(os.MkdirAll(*out, 0o755))
	// Quick runs (CI) write quick.{md,json}, ignored by git, so they never
	// overwrite the full results kept in latest.{md,json}.
	base := "latest"
	switch {
	case *quick:
		base = "quick"
	case *scaleMode:
		base = "scale"
	}
	// A partial run must not replace a complete one.
	if len(cfg.Only) > 0 {
		base = "partial"
	}
	must(os.WriteFile(filepath.Join(*out, base+".md"), []byte(md), 0o644))
	j, _ := json.MarshalIndent(rep, "", "  ")
	must(os.WriteFile(filepath.Join(*out, base+".json"), append(j, '\n'), 0o644))
	if failed > 0 {
		cleanup()
		fmt.Fprintf(os.Stderr, "hostlink-bench: %d scenario run(s) failed\n", failed)
		os.Exit(1)
	}
}

func makeServers(hostlinkBin, nodeModules, tmp, root string) []*server {
	h, err := newHostlink(hostlinkBin, filepath.Join(tmp, "home-hostlink"), root)
	must(err)
	f, err := newServerFilesystem(nodeModules, filepath.Join(tmp, "home-fs"), root)
	must(err)
	d, err := newDesktopCommander(nodeModules, filepath.Join(tmp, "home-dc"), root)
	must(err)
	return []*server{h, f, d}
}

// cleanup removes the temporary directory; must runs it before exiting.
var cleanup = func() {}

func must(err error) {
	if err != nil {
		cleanup()
		fmt.Fprintln(os.Stderr, "hostlink-bench:", err)
		os.Exit(1)
	}
}

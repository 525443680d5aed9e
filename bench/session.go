package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// longCall is one kind of call in the long session.
type longCall struct {
	tool string
	args func(i int) map[string]any
}

// scaleLongSession is a long agent session: one Streamable HTTP session
// making sc.LongCalls calls in turn of the kinds an agent mixes (read,
// write, stat, list, search, a short command), against one daemon. It
// reports the daemon's RSS before, at its peak and after, to show whether
// memory grows with the calls a session has made.
func scaleLongSession(ctx context.Context, r *scaleResult, sc scaleConfig, d *daemon, root string) error {
	const dir, files = "scale-session", 50
	abs := filepath.Join(root, dir)
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(abs)
	for i := range files {
		content := lines(4096, 100+i)
		if i%10 == 3 {
			content = append(content, []byte("here is the "+needle+" again\n")...)
		}
		if err := os.WriteFile(filepath.Join(abs, fmt.Sprintf("f%03d.txt", i)), content, 0o644); err != nil {
			return err
		}
	}
	content := string(lines(4096, 13))
	file := func(i int) string { return fmt.Sprintf("%s/f%03d.txt", dir, i%files) }
	kinds := []longCall{
		{"read_file", func(i int) map[string]any { return map[string]any{"path": file(i)} }},
		{"write_file", func(i int) map[string]any {
			return map[string]any{"path": fmt.Sprintf("%s/w%03d.txt", dir, i%files), "content": content}
		}},
		{"stat", func(i int) map[string]any { return map[string]any{"path": file(i)} }},
		{"list_directory", func(int) map[string]any { return map[string]any{"path": dir} }},
		{"search_text", func(int) map[string]any { return map[string]any{"path": dir, "query": needle} }},
		{"run_command", func(int) map[string]any { return map[string]any{"argv": []string{"true"}} }},
	}
	cs, err := d.connect(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	for i := range kinds { // warm up: each kind once
		if _, err := callOK(ctx, cs, kinds[i].tool, kinds[i].args(i)); err != nil {
			return err
		}
	}
	before, err := procRSS(d.pid())
	if err != nil {
		return err
	}
	rss := sampleRSS(d.pid())
	lat := make([]float64, 0, sc.LongCalls)
	t := time.Now()
	for i := range sc.LongCalls {
		k := kinds[i%len(kinds)]
		c := time.Now()
		if _, err := callOK(ctx, cs, k.tool, k.args(i)); err != nil {
			rss.end()
			return fmt.Errorf("call %d: %w", i, err)
		}
		lat = append(lat, ms(time.Since(c)))
	}
	wall := time.Since(t)
	peak := rss.end()
	after, err := procRSS(d.pid())
	if err != nil {
		return err
	}
	r.Hostlink = []metric{
		{"throughput", float64(sc.LongCalls) / wall.Seconds(), "calls/s"},
		{"p50", percentile(lat, 0.5), "ms"},
		{"p99", percentile(lat, 0.99), "ms"},
		{"daemon RSS before", mib(before), "MiB"},
		{"daemon RSS peak", peak, "MiB"},
		{"daemon RSS after", mib(after), "MiB"},
	}
	r.LimitDesc = "no direct equivalent"
	r.Target = "daemon RSS after ≤ before + 32 MiB (memory does not grow with a session's calls)"
	r.verdict(mib(after) <= mib(before)+32)
	return nil
}

package files

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
)

// searcher runs search_text over the files a walk yields: workers read and
// scan files in parallel, and the results are taken in walk order, so that
// the limits cut the same files and matches, in the same order, as a
// sequential scan would.
type searcher struct {
	limits Limits
	root   *jail.Root
	match  *lineMatcher
	max    int
	call   *ops.Call
}

// scanned is what a worker found in one file.
type scanned struct {
	skipped bool  // unreadable or too large: not scanned
	size    int64 // the file's size when opened
	n       int64 // bytes read
	binary  bool
	matches []fileapi.Match
}

// walkFunc yields root-relative file paths to visit until visit returns
// false.
type walkFunc func(visit func(full string) bool) error

// batchSize is how many files travel together between the walk, the
// workers and the collector: one channel handoff per file costs more than
// opening a small file.
const batchSize = 32

func (s *searcher) run(ctx context.Context, walk walkFunc) (fileapi.SearchTextResult, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	// A batch holds consecutive files of the walk, the first being the
	// idx-th.
	type batch struct {
		idx   int
		files []string
	}
	type found struct {
		idx int
		rs  []scanned
	}
	jobs := make(chan batch, 4)
	results := make(chan found, 4)
	var walkErr error
	go func() {
		defer close(jobs)
		b := batch{files: make([]string, 0, batchSize)}
		send := func() bool {
			select {
			case jobs <- b:
				b = batch{idx: b.idx + len(b.files), files: make([]string, 0, batchSize)}
				return true
			case <-ctx.Done():
				return false
			}
		}
		walkErr = walk(func(full string) bool {
			b.files = append(b.files, full)
			return len(b.files) < batchSize || send()
		})
		if len(b.files) > 0 {
			send()
		}
	}()
	var wg sync.WaitGroup
	for range min(max(runtime.GOMAXPROCS(0), 2), 8) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			var dirs dirCache
			defer dirs.close()
			for b := range jobs {
				f := found{idx: b.idx, rs: make([]scanned, 0, len(b.files))}
				for _, full := range b.files {
					if ctx.Err() != nil {
						break
					}
					var r scanned
					r, buf = s.scan(&dirs, full, buf)
					f.rs = append(f.rs, r)
				}
				if len(f.rs) == len(b.files) {
					results <- f
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	res := fileapi.SearchTextResult{Matches: []fileapi.Match{}}
	pending := map[int][]scanned{}
	next, done := 0, false
	for f := range results {
		if done || ctx.Err() != nil {
			continue // draining after a limit was reached or the caller left
		}
		pending[f.idx] = f.rs
		for !done && ctx.Err() == nil {
			rs, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next += len(rs)
			// The caller may cancel from a progress report: take nothing more.
			for _, r := range rs {
				if done = s.take(&res, r); done || ctx.Err() != nil {
					break
				}
			}
		}
		if done {
			stop()
		}
	}
	if err := context.Cause(ctx); err != nil && !done {
		return fileapi.SearchTextResult{}, err
	}
	if walkErr != nil {
		return fileapi.SearchTextResult{}, walkErr
	}
	return res, nil
}

// take adds one file's findings to res in walk order and reports whether
// a limit ends the search.
func (s *searcher) take(res *fileapi.SearchTextResult, r scanned) bool {
	if r.skipped {
		res.FilesSkipped++
		return false
	}
	if res.BytesScanned+r.size > s.limits.MaxSearchBytes {
		res.Truncated, res.StopReason = true, "max_bytes"
		return true
	}
	res.BytesScanned += r.n
	res.FilesScanned++
	if res.FilesScanned%progressEvery == 0 {
		s.call.Progress(float64(res.BytesScanned), float64(s.limits.MaxSearchBytes), "scanned "+strconv.Itoa(res.FilesScanned)+" files")
	}
	if r.binary {
		res.FilesSkipped++
		res.FilesScanned--
		return false
	}
	for _, m := range r.matches {
		if len(res.Matches) == s.max {
			res.Truncated, res.StopReason = true, "max_matches"
			return true
		}
		res.Matches = append(res.Matches, m)
	}
	return false
}

// dirCache holds a worker's open directory: the walk yields a directory's
// files one after another, so each is opened below its directory's handle
// rather than by resolving its whole path again.
type dirCache struct {
	name string // root-relative
	dir  *jail.Dir
	err  error
}

// open returns the open directory called name, opening it if it is not the
// one held.
func (c *dirCache) open(root *jail.Root, name string) (*jail.Dir, error) {
	if c.name == name && (c.dir != nil || c.err != nil) {
		return c.dir, c.err
	}
	c.close()
	c.name = name
	p, err := root.Resolve(name)
	if err == nil {
		c.dir, err = root.OpenDirectory(p)
	}
	c.err = err
	return c.dir, err
}

func (c *dirCache) close() {
	if c.dir != nil {
		c.dir.Close()
	}
	*c = dirCache{}
}

// scan reads and searches one file through the jail, reusing buf.
func (s *searcher) scan(dirs *dirCache, full string, buf []byte) (scanned, []byte) {
	dirName, name := ".", full
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		dirName, name = full[:i], full[i+1:]
	}
	dir, err := dirs.open(s.root, dirName)
	if err != nil {
		return scanned{skipped: true}, buf
	}
	f, fi, err := dir.OpenFile(name)
	if err != nil {
		return scanned{skipped: true}, buf
	}
	defer f.Close()
	if fi.Size() > s.limits.MaxSearchFileBytes {
		return scanned{skipped: true}, buf
	}
	// Read what the file held when opened: bytes appended since are not
	// searched, as grep would not see them either had it run a moment
	// earlier.
	if int64(cap(buf)) < fi.Size() {
		buf = make([]byte, fi.Size())
	}
	n, err := io.ReadFull(f, buf[:fi.Size()])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return scanned{skipped: true}, buf
	}
	data := buf[:n]
	r := scanned{size: fi.Size(), n: int64(len(data))}
	if bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0 {
		r.binary = true
		return r, buf
	}
	s.match.each(data, func(line, col int, text []byte) bool {
		r.matches = append(r.matches, fileapi.Match{Path: full, Line: line, Column: col + 1, Text: cutText(text, maxLineText)})
		return len(r.matches) <= s.max
	})
	return r, buf
}

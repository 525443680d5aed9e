package files

import (
	"context"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/glob"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// ListDirectoryArgs is list_directory's request.
type ListDirectoryArgs struct {
	Workdir       string `json:"workdir,omitempty" jsonschema:"workdir alias (see read_file)"`
	Path          string `json:"path,omitempty" jsonschema:"directory to list (default: the workdir root)"`
	Glob          string `json:"glob,omitempty" jsonschema:"only entries whose name (not path) matches this glob"`
	Recursive     bool   `json:"recursive,omitempty" jsonschema:"descend into subdirectories (never through symlinks)"`
	IncludeHidden bool   `json:"include_hidden,omitempty" jsonschema:"include names starting with a dot"`
	MaxEntries    int    `json:"max_entries,omitempty" min:"0" max:"100000" jsonschema:"page size; capped by the configured limit"`
	Cursor        string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous page"`
}

func init() {
	ops.Add(&operations, ops.Spec{Name: "list_directory", Title: "List directory",
		Description: "List a directory's entries, sorted, paginated with a cursor; optionally recursive and filtered by a name glob. Symlinks are reported, never followed. " +
			"The listing has one line per entry: TYPE SIZE MTIME NAME (see the output schema).",
		Capability: ops.Files, Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		(*Service).listDirectory)
}

// Describe implements policy.Describer.
func (a ListDirectoryArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	act, _, err := describePath(dc, a.Workdir, a.Path)
	return act, err
}

// Entry is one listed directory entry. Listings carry entries to JSON
// callers as lines (see appendListing); Entry is their form in this
// process (the platform link).
type Entry struct {
	Name        string  `json:"name"`
	Path        string  `json:"path" jsonschema:"relative to the workdir"`
	Type        string  `json:"type" enum:"file,dir,symlink,other"`
	SizeBytes   int64   `json:"size_bytes"`
	Mtime       float64 `json:"mtime"`
	LinkTarget  string  `json:"link_target,omitempty" jsonschema:"for a symlink inside the workdir: its target, relative to the workdir"`
	LinkOutside bool    `json:"link_outside,omitempty" jsonschema:"the symlink points outside the workdir; it is never followed"`
	rel         string  // Path relative to the listed directory
}

// ListDirectoryResult is list_directory's response.
type ListDirectoryResult struct {
	Workdir    string `json:"workdir"`
	Path       string `json:"path"`
	Listing    string `json:"listing" jsonschema:"one line per entry, names sorted: TYPE SIZE MTIME NAME, TYPE f file, d directory, l symlink (NAME -> TARGET, relative to the workdir), L symlink leading outside the workdir (never followed), o other; SIZE in bytes (- for a directory); MTIME whole seconds since the Unix epoch; NAME relative to path, written as a JSON string when it is not plain text"`
	Count      int    `json:"count" jsonschema:"entries in listing"`
	Truncated  bool   `json:"truncated" jsonschema:"more entries remain; pass next_cursor to get them"`
	NextCursor string `json:"next_cursor,omitempty"`
	// Entries are the listing's entries, for callers in this process.
	Entries []Entry `json:"-"`
}

func (s *Service) listDirectory(ctx context.Context, c *ops.Call, a ListDirectoryArgs) (ListDirectoryResult, error) {
	if a.Glob != "" && glob.Check(a.Glob) != nil {
		return ListDirectoryResult{}, errcode.New(errcode.InvalidArgument, "glob is not a valid pattern")
	}
	t, err := s.target(c, a.Workdir, a.Path)
	if err != nil {
		return ListDirectoryResult{}, err
	}
	var match func(rel, name string) bool
	if a.Glob != "" {
		pattern, fold := a.Glob, t.wd.Root.CaseInsensitive()
		match = func(_, name string) bool { return glob.Match(pattern, name, fold) }
	}
	entries, next, err := s.collect(ctx, t, a.Recursive, a.IncludeHidden, a.MaxEntries, a.Cursor, match)
	if err != nil {
		return ListDirectoryResult{}, err
	}
	c.Detail("entries_returned", len(entries))
	return ListDirectoryResult{Workdir: t.wd.Alias, Path: t.String(), Listing: listing(entries), Count: len(entries),
		Truncated: next != "", NextCursor: next, Entries: entries}, nil
}

// collect lists up to a page of entries below t that match, returning the
// next page's cursor ("" when done).
func (s *Service) collect(ctx context.Context, t target, recursive, hidden bool, max int, cursor string,
	match func(rel, name string) bool) ([]Entry, string, error) {
	root := t.wd.Root
	dir, err := root.Canonical(t.path)
	if err != nil {
		return nil, "", err
	}
	if fi, err := root.Stat(dir); err != nil {
		return nil, "", err
	} else if !fi.IsDir() {
		return nil, "", errcode.New(errcode.NotADirectory, "%q is not a directory", t.String())
	}
	after, err := decodeCursor(cursor)
	if err != nil {
		return nil, "", err
	}
	if max <= 0 || max > s.limits.MaxListEntries {
		max = s.limits.MaxListEntries
	}
	if !recursive {
		return s.collectDir(ctx, root, dir, hidden, max, after, match)
	}
	entries := []Entry{}
	next := ""
	w := &walker{root: root, start: dir, recursive: recursive, includeHidden: hidden, after: after}
	last := ""
	err = w.walk(func(rel string, d fs.DirEntry) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if match != nil && !match(rel, d.Name()) {
			return true, nil
		}
		if len(entries) == max {
			next = encodeCursor(last)
			return false, nil
		}
		p := rel
		if !dir.IsRoot() {
			p = dir.String() + "/" + rel
		}
		fi, _ := d.Info()
		e := describeEntry(root, p, d.Name(), d.Type(), fi)
		e.rel = rel
		entries = append(entries, e)
		last = rel
		return true, nil
	})
	if err != nil {
		return nil, "", err
	}
	return entries, next, nil
}

// describeEntry makes the entry of name at rel, of type typ, from what
// lstat said of it (fi, nil when it could not). Symlinks are described,
// not followed.
func describeEntry(root *jail.Root, rel, name string, typ fs.FileMode, fi fs.FileInfo) Entry {
	e := Entry{Name: name, Path: rel}
	if fi != nil {
		e.SizeBytes = fi.Size()
		e.Mtime = epoch(fi.ModTime())
	}
	switch {
	case typ&fs.ModeSymlink != 0:
		e.Type = "symlink"
		if p, err := root.Resolve(rel); err == nil {
			if real, err := root.Canonical(p); err == nil {
				e.LinkTarget = real.String()
			} else {
				e.LinkOutside = true
			}
		}
	case typ.IsDir():
		e.Type, e.SizeBytes = "dir", 0
	case typ.IsRegular():
		e.Type = "file"
	default:
		e.Type = "other"
	}
	return e
}

// FindFilesArgs is find_files' request.
type FindFilesArgs struct {
	Workdir       string `json:"workdir,omitempty" jsonschema:"workdir alias (see read_file)"`
	Path          string `json:"path,omitempty" jsonschema:"directory to search below (default: the workdir root)"`
	Pattern       string `json:"pattern" jsonschema:"glob matched against paths relative to path; ** matches any number of directories, e.g. **/*.go"`
	IncludeHidden bool   `json:"include_hidden,omitempty"`
	MaxResults    int    `json:"max_results,omitempty" min:"0" max:"100000" jsonschema:"page size; capped by the configured limit"`
	Cursor        string `json:"cursor,omitempty"`
}

func init() {
	ops.Add(&operations, ops.Spec{Name: "find_files", Title: "Find files",
		Description: "Find paths matching a glob (** for any depth) below a directory, paginated.",
		Capability:  ops.Files, Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		(*Service).findFiles)
}

// Describe implements policy.Describer.
func (a FindFilesArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	act, _, err := describePath(dc, a.Workdir, a.Path)
	act.Add("Pattern", a.Pattern)
	return act, err
}

// FindFilesResult is find_files' response.
type FindFilesResult struct {
	Workdir    string `json:"workdir"`
	Path       string `json:"path"`
	Listing    string `json:"listing" jsonschema:"one line per match, in walk order, as list_directory's listing: TYPE SIZE MTIME NAME with NAME relative to path"`
	Count      int    `json:"count" jsonschema:"matches in listing"`
	Truncated  bool   `json:"truncated"`
	NextCursor string `json:"next_cursor,omitempty"`
	// Matches are the listing's entries, for callers in this process.
	Matches []Entry `json:"-"`
}

func (s *Service) findFiles(ctx context.Context, c *ops.Call, a FindFilesArgs) (FindFilesResult, error) {
	if glob.Check(a.Pattern) != nil {
		return FindFilesResult{}, errcode.New(errcode.InvalidArgument, "pattern is not a valid glob")
	}
	if isAbs(a.Pattern) || slices.Contains(strings.Split(strings.ReplaceAll(a.Pattern, `\`, "/"), "/"), "..") {
		return FindFilesResult{}, errcode.New(errcode.InvalidArgument, "pattern must be relative to path and must not contain ..")
	}
	t, err := s.target(c, a.Workdir, a.Path)
	if err != nil {
		return FindFilesResult{}, err
	}
	pattern := path.Clean(strings.ReplaceAll(a.Pattern, `\`, "/"))
	fold := t.wd.Root.CaseInsensitive()
	match := func(rel, _ string) bool { return glob.Match(pattern, rel, fold) }
	matches, next, err := s.collect(ctx, t, true, a.IncludeHidden, a.MaxResults, a.Cursor, match)
	if err != nil {
		return FindFilesResult{}, err
	}
	c.Detail("matches", len(matches))
	return FindFilesResult{Workdir: t.wd.Alias, Path: t.String(), Listing: listing(matches), Count: len(matches),
		Truncated: next != "", NextCursor: next, Matches: matches}, nil
}

package files

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/glob"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

func init() {
	ops.AddNormalized(&operations, ops.Spec{Name: fileapi.OpListDirectory, Title: "List directory",
		Description: "List a directory's entries, sorted, paginated with a cursor; optionally recursive and filtered by a name glob. Symlinks are reported, never followed. " +
			"Over MCP the result is text: a head line of JSON (count, truncated, next_cursor), then one line per entry: TYPE NAME, " +
			"or with details TYPE SIZE MTIME NAME (TYPE f file, d directory, l symlink, o other; names that are not plain text as JSON strings).",
		Capability: ops.Files, Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		normalizePath[fileapi.ListDirectoryArgs], describePlaced[fileapi.ListDirectoryArgs], (*Service).listDirectory)
}

func (s *Service) listDirectory(ctx context.Context, c *ops.Call, r placed[fileapi.ListDirectoryArgs]) (fileapi.ListDirectoryResult, error) {
	a, t := r.args, r.t
	if a.Glob != "" && glob.Check(a.Glob) != nil {
		return fileapi.ListDirectoryResult{}, errcode.New(errcode.InvalidArgument, "glob is not a valid pattern")
	}
	var match func(rel, name string) bool
	if a.Glob != "" {
		pattern, fold := a.Glob, t.wd.Root.CaseInsensitive()
		match = func(_, name string) bool { return glob.Match(pattern, name, fold) }
	}
	key := listingKey("list_directory", t.wd.Alias, a.Glob, a.Recursive, a.IncludeHidden)
	entries, next, err := s.collect(ctx, c, t, key, a.Recursive, a.IncludeHidden, a.Details, a.MaxEntries, a.Cursor, match)
	if err != nil {
		return fileapi.ListDirectoryResult{}, err
	}
	c.Detail("entries_returned", len(entries))
	return fileapi.ListDirectoryResult{Workdir: t.wd.Alias, Path: t.String(), Count: len(entries),
		Truncated: next != "", NextCursor: next, Entries: entries}, nil
}

// listingKey names a listing for its cursors (see cursors.take): the
// operation and the filters; collect adds the directory.
func listingKey(op, workdir, filter string, recursive, hidden bool) string {
	return fmt.Sprintf("%s\x00%s\x00%q\x00%t\x00%t", op, workdir, filter, recursive, hidden)
}

// collect lists up to a page of entries below t that match, returning the
// next page's cursor ("" when done). The first page reads the directory
// (or walks the tree, up to walkAhead entries past the page); the rest
// are kept as a snapshot under the cursor (see cursors), from which the
// following pages come, so that no page reads again what another read.
func (s *Service) collect(ctx context.Context, c *ops.Call, t target, key string, recursive, hidden, details bool, max int, cursor string,
	match func(rel, name string) bool) ([]fileapi.Entry, string, error) {
	root := t.wd.Root
	dir, err := root.Canonical(t.path)
	if err != nil {
		return nil, "", err
	}
	if max <= 0 || max > s.limits.MaxListEntries {
		max = s.limits.MaxListEntries
	}
	key += "\x00" + dir.String()
	owner := cursorOwner(c)
	var snap *listSnapshot
	if cursor != "" {
		if snap, err = s.cursors.take(cursor, owner, key); err != nil {
			return nil, "", err
		}
	} else {
		if fi, err := root.Stat(dir); err != nil {
			return nil, "", err
		} else if !fi.IsDir() {
			return nil, "", errcode.New(errcode.NotADirectory, "%q is not a directory", t.String())
		}
		snap = &listSnapshot{}
		if recursive {
			snap.resume = []string{} // walk from the start
		} else if snap.items, err = readDirItems(root, dir, hidden, match); err != nil {
			return nil, "", err
		}
	}
	if snap.resume != nil && len(snap.items) <= max {
		// Walk on from where the snapshot ends, up to walkAhead past the page.
		if err := walkItems(ctx, root, dir, hidden, match, snap, max+walkAhead); err != nil {
			return nil, "", err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	page := snap.items[:min(max, len(snap.items))]
	next := ""
	if len(snap.items) > len(page) || snap.resume != nil {
		rest := &listSnapshot{owner: owner, listing: key, items: snap.items[len(page):], resume: snap.resume}
		next = s.cursors.put(rest)
	}
	prefix := "" // entries' paths are relative to the workdir, below the path asked for
	if !t.path.IsRoot() {
		prefix = t.String() + "/"
	}
	entries, err := describeItems(root, dir, prefix, page, details)
	if err != nil {
		return nil, "", err
	}
	return entries, next, nil
}

// readDirItems reads the directory dir's entries (names and types, no
// stat), sorted, without the hidden ones unless hidden, that match.
func readDirItems(root *jail.Root, dir jail.Path, hidden bool, match func(rel, name string) bool) ([]item, error) {
	ents, err := root.ReadDirTypes(dir, func(name string, _ fs.FileMode) (bool, bool) {
		return (hidden || !strings.HasPrefix(name, ".")) && (match == nil || match(name, name)), true
	})
	if err != nil {
		return nil, err
	}
	items := make([]item, len(ents))
	for i, e := range ents {
		items[i] = item{rel: e.Name, typ: uint32(e.Type)}
	}
	return items, nil
}

// walkItems walks the tree below dir after snap.resume, appending to
// snap.items what matches until it holds upTo items; snap.resume is then
// where the walk stopped, or nil when it reached the end.
func walkItems(ctx context.Context, root *jail.Root, dir jail.Path, hidden bool, match func(rel, name string) bool, snap *listSnapshot, upTo int) error {
	after := snap.resume
	if len(after) == 0 {
		after = nil
	}
	snap.resume = nil
	w := &walker{root: root, start: dir, recursive: true, includeHidden: hidden, after: after}
	return w.walk(func(rel string, d fs.DirEntry) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if match != nil && !match(rel, d.Name()) {
			return true, nil
		}
		if len(snap.items) == upTo {
			last := snap.items[len(snap.items)-1].rel
			snap.resume = strings.Split(last, "/")
			return false, nil
		}
		snap.items = append(snap.items, item{rel: rel, typ: uint32(d.Type())})
		return true, nil
	})
}

// describeItems makes the page's entries below dir (their paths below
// prefix): name and type, and with details one lstat each (in parallel
// per directory, see jail.Root.LstatNames); an entry gone since the
// directory was read is then left out.
func describeItems(root *jail.Root, dir jail.Path, prefix string, page []item, details bool) ([]fileapi.Entry, error) {
	entries := make([]fileapi.Entry, 0, len(page))
	for i := 0; i < len(page); {
		// A run of entries of one directory.
		parent, _ := splitRel(page[i].rel)
		j := i + 1
		for j < len(page) {
			if p, _ := splitRel(page[j].rel); p != parent {
				break
			}
			j++
		}
		var infos []fs.FileInfo
		if details {
			pdir, err := joinRel(root, dir, parent)
			if err != nil {
				return nil, err
			}
			names := make([]string, j-i)
			for k := range names {
				_, names[k] = splitRel(page[i+k].rel)
			}
			if infos, err = root.LstatNames(pdir, names); err != nil {
				return nil, err
			}
		}
		for k, it := range page[i:j] {
			_, name := splitRel(it.rel)
			p := prefix + it.rel
			typ := fs.FileMode(it.typ)
			if !details {
				entries = append(entries, fileapi.Entry{Name: name, Path: p, Type: typeName(typ)})
				continue
			}
			if infos[k] == nil {
				continue
			}
			entries = append(entries, describeEntry(root, p, name, infos[k].Mode().Type(), infos[k]))
		}
		i = j
	}
	return entries, nil
}

// splitRel splits a listing's relative path into its directory ("" for
// the listed one) and name.
func splitRel(rel string) (parent, name string) {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i], rel[i+1:]
	}
	return "", rel
}

// joinRel is dir/rel, rel a listing's relative directory.
func joinRel(root *jail.Root, dir jail.Path, rel string) (jail.Path, error) {
	p := dir
	if rel == "" {
		return p, nil
	}
	for _, c := range strings.Split(rel, "/") {
		var err error
		if p, err = root.Join(p, c); err != nil {
			return jail.Path{}, err
		}
	}
	return p, nil
}

func typeName(typ fs.FileMode) string {
	switch {
	case typ&fs.ModeSymlink != 0:
		return "symlink"
	case typ.IsDir():
		return "dir"
	case typ.IsRegular():
		return "file"
	}
	return "other"
}

// describeEntry makes the entry of name at rel, of type typ, from what
// lstat said of it. Symlinks are described, not followed.
func describeEntry(root *jail.Root, rel, name string, typ fs.FileMode, fi fs.FileInfo) fileapi.Entry {
	e := fileapi.Entry{Name: name, Path: rel, Type: typeName(typ)}
	size, mtime := fi.Size(), epoch(fi.ModTime())
	if e.Type == "dir" {
		size = 0
	}
	e.SizeBytes, e.Mtime = &size, &mtime
	if e.Type == "symlink" {
		if p, err := root.Resolve(rel); err == nil {
			if real, err := root.Canonical(p); err == nil {
				e.LinkTarget = real.String()
			} else {
				e.LinkOutside = true
			}
		}
	}
	return e
}

func init() {
	ops.AddNormalized(&operations, ops.Spec{Name: fileapi.OpFindFiles, Title: "Find files",
		Description: "Find paths matching a glob (** for any depth) below a directory, paginated. " +
			"Over MCP the result is text as list_directory's: a head line of JSON, then one line per match, its path relative to path.",
		Capability: ops.Files, Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		normalizePath[fileapi.FindFilesArgs], (*Service).describeFind, (*Service).findFiles)
}

func (s *Service) describeFind(r placed[fileapi.FindFilesArgs], dc policy.DescribeContext) (policy.Action, error) {
	act, _ := s.describePlace(r.place, dc)
	act.Add("Pattern", r.args.Pattern)
	return act, nil
}

func (s *Service) findFiles(ctx context.Context, c *ops.Call, r placed[fileapi.FindFilesArgs]) (fileapi.FindFilesResult, error) {
	a, t := r.args, r.t
	if glob.Check(a.Pattern) != nil {
		return fileapi.FindFilesResult{}, errcode.New(errcode.InvalidArgument, "pattern is not a valid glob")
	}
	if isAbs(a.Pattern) || slices.Contains(strings.Split(strings.ReplaceAll(a.Pattern, `\`, "/"), "/"), "..") {
		return fileapi.FindFilesResult{}, errcode.New(errcode.InvalidArgument, "pattern must be relative to path and must not contain ..")
	}
	pattern := path.Clean(strings.ReplaceAll(a.Pattern, `\`, "/"))
	fold := t.wd.Root.CaseInsensitive()
	match := func(rel, _ string) bool { return glob.Match(pattern, rel, fold) }
	key := listingKey("find_files", t.wd.Alias, pattern, true, a.IncludeHidden)
	matches, next, err := s.collect(ctx, c, t, key, true, a.IncludeHidden, a.Details, a.MaxResults, a.Cursor, match)
	if err != nil {
		return fileapi.FindFilesResult{}, err
	}
	c.Detail("matches", len(matches))
	return fileapi.FindFilesResult{Workdir: t.wd.Alias, Path: t.String(), Count: len(matches),
		Truncated: next != "", NextCursor: next, Matches: matches}, nil
}

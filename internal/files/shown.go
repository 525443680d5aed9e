package files

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// An approval binds what its action's targets were when the user was shown
// them (policy.Extent: existence, kind, identity, size, revision, a
// directory's tree). An operation running on an approval probes each
// target again under its path lock and refuses with CONFLICT when it
// differs, then acts through a checked jail mutation that compares the
// entry once more in the directory handle it changes it through.

// seen is what probe found at a path.
type seen struct {
	ext     policy.Extent
	content []byte               // a regular file's, when asked for and within the read limit
	tree    map[string]treeEntry // a directory's entries, by path below it
}

// treeEntry is one entry of a measured tree, as keep compares it.
type treeEntry struct {
	id   string // "" where it could not be learnt
	dir  bool
	size int64
}

// probe says what is at t, reading through the jail as the operations do:
// following a final symlink (what a write reaches) or not (the entry a
// delete, move or mkdir acts on, with a directory's whole tree measured).
// withContent also returns a regular file's content; past the read limit
// it fails with FILE_TOO_LARGE, the extent filled in.
func (s *Service) probe(t target, follow, withContent bool) (seen, error) {
	root := t.wd.Root
	p, err := root.Canonical(t.path)
	if !follow && !t.path.IsRoot() {
		var dir jail.Path
		if dir, err = root.Canonical(t.path.Parent()); err == nil {
			p, err = root.Join(dir, t.path.Base())
		}
	}
	if err == nil {
		// What no operation may change is refused before anything is
		// asked or probed.
		err = root.Changeable(p)
	}
	if err != nil {
		return seen{}, err
	}
	sn := seen{ext: policy.Extent{Path: p.String()}}
	if !p.IsRoot() {
		fi, err := root.Stat(p.Parent())
		switch code := errcode.CodeOf(err); {
		case err == nil:
			sn.ext.Dir = jail.ID(fi)
		case code != errcode.PathNotFound:
			return seen{}, err
		}
	}
	fi, err := root.Lstat(p)
	if errcode.CodeOf(err) == errcode.PathNotFound {
		return sn, nil
	}
	if err != nil {
		return seen{}, err
	}
	sn.ext.Exists, sn.ext.Kind, sn.ext.ID = true, kind(fi), jail.ID(fi)
	switch {
	case fi.Mode().IsRegular():
		return sn, s.probeFile(t, p, &sn, withContent)
	case fi.IsDir() && !follow:
		return sn, s.probeTree(root, p, &sn)
	case !fi.IsDir():
		sn.ext.Bytes = fi.Size()
	}
	return sn, nil
}

// probeFile describes the regular file at p from one open handle: its
// identity, size and revision, and its content when asked for. A file
// the jail will not open (hard links, permissions) has no revision; a
// read of it says why.
func (s *Service) probeFile(t target, p jail.Path, sn *seen, withContent bool) error {
	f, fi, err := t.wd.Root.OpenFile(p)
	if err != nil {
		if withContent {
			return err
		}
		return nil
	}
	defer f.Close()
	sn.ext.ID, sn.ext.Bytes = jail.ID(fi), fi.Size()
	if withContent && fi.Size() <= s.limits.MaxReadBytes {
		data, err := io.ReadAll(io.LimitReader(f, s.limits.MaxReadBytes+1))
		if err != nil {
			return errcode.New(errcode.Internal, "reading %q failed", t.String())
		}
		sum := sha256.Sum256(data)
		sn.content, sn.ext.Revision = data, contentRevision(sum[:])
		return nil
	}
	if sn.ext.Revision, err = revisionOf(f, fi, s.limits.MaxReadBytes); err != nil {
		return errcode.New(errcode.Internal, "reading %q failed", t.String())
	}
	if withContent {
		return errcode.New(errcode.FileTooLarge, "%q is larger than the read limit of %d bytes", t.String(), s.limits.MaxReadBytes)
	}
	return nil
}

// maxMeasured bounds the entries a tree's measure counts, so that
// describing a delete of a huge tree stays cheap; past it the extent is
// partial, and binds the entries counted.
const maxMeasured = 100_000

// probeTree measures the tree below the directory p as the jail walks it
// (never through a link, hostlink's own directories left out): its
// entries, the bytes of its regular files, and a digest of each entry's
// path, kind, identity and size in walk order.
func (s *Service) probeTree(root *jail.Root, p jail.Path, sn *seen) error {
	prefix := p.String() + "/"
	if p.IsRoot() {
		prefix = ""
	}
	h := sha256.New()
	sn.tree = make(map[string]treeEntry)
	err := root.WalkDir(p, func(rel string, d fs.DirEntry, err error) error {
		if err != nil || rel == p.String() {
			return nil
		}
		if sn.ext.Entries >= maxMeasured {
			sn.ext.Partial = true
			return fs.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone since the listing
		}
		sub := strings.TrimPrefix(rel, prefix)
		e := treeEntry{id: jail.ID(info), dir: d.IsDir()}
		if e.id == "" {
			e.id = jail.EntryID(d) // a listing without identities (Windows)
		}
		if !e.dir {
			e.size = info.Size()
		}
		if info.Mode().IsRegular() {
			sn.ext.Bytes += info.Size()
		}
		sn.ext.Entries++
		sn.tree[sub] = e
		fmt.Fprintf(h, "%q %s %s %d\n", sub, kind(info), e.id, e.size)
		return nil
	})
	sn.ext.Tree = hex.EncodeToString(h.Sum(nil))
	return err
}

// keeps reports whether the entry rel below a measured directory, as a
// delete finds it (fi), is the one measured: a tree shown in full keeps
// nothing else, one shown as larger than was counted keeps entries past
// the count.
func (sn seen) keeps(rel string, fi fs.FileInfo) bool {
	e, ok := sn.tree[rel]
	if !ok {
		return sn.ext.Partial
	}
	return e.dir == fi.IsDir() && (e.id == "" || e.id == jail.ID(fi)) && (e.dir || e.size == fi.Size())
}

// kind names what fi is, as an approval shows it.
func kind(fi fs.FileInfo) string {
	switch {
	case fi.IsDir():
		return "directory"
	case fi.Mode().IsRegular():
		return "file"
	case fi.Mode()&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "special file"
}

// shown is what the approval c runs on showed at role, and what is at t
// now (probed as probe does): CONFLICT when they differ. bound is false,
// and nothing is probed, when no approved state binds the call.
func (s *Service) shown(c *ops.Call, role string, t target, follow bool) (want policy.Extent, now seen, bound bool, err error) {
	want, bound = c.Shown(role)
	if !bound {
		return want, seen{}, false, nil
	}
	if now, err = s.probe(t, follow, false); err != nil {
		return want, now, true, err
	}
	if now.ext != want {
		return want, now, true, changed(t)
	}
	return want, now, true, nil
}

// atShown is the check a mutation of t runs as it acts (jail.Check): the
// entry it finds, in the directory it holds, must be the one the approval
// showed (want). A directory that was not there when shown (created since
// by this operation's create_parents) is not compared.
func atShown(t target, want policy.Extent) jail.Check {
	return func(at jail.At) error {
		same := samePath(t.wd.Root, at.Path.String(), want.Path) &&
			(want.Dir == "" || jail.ID(at.Dir) == want.Dir) &&
			(at.Entry != nil) == want.Exists
		if same && at.Entry != nil {
			same = kind(at.Entry) == want.Kind && jail.ID(at.Entry) == want.ID &&
				(at.Entry.IsDir() || at.Entry.Size() == want.Bytes)
		}
		if !same {
			return changed(t)
		}
		return nil
	}
}

// absent is the state of nothing at the place want describes.
func absent(want policy.Extent) policy.Extent {
	return policy.Extent{Path: want.Path, Dir: want.Dir}
}

func samePath(root *jail.Root, a, b string) bool {
	return a == b || root.CaseInsensitive() && strings.EqualFold(a, b)
}

// changed is the error of an operation whose target is no longer what its
// approval showed.
func changed(t target) error {
	return errcode.New(errcode.Conflict, "%q is no longer what the approval showed; nothing was changed. Send the request again to be asked about what is there now", t.String())
}

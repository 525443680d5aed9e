package browse

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/browseapi"
	"github.com/hostlink/hostlink/internal/rootgrant"
)

// Limits of a browse. They are fixed on the host: the platform cannot ask
// for more.
const (
	// BrowseTTL is how long a browse and its references live after it
	// starts.
	BrowseTTL = 5 * time.Minute
	// MaxPageEntries is the most directories one page lists.
	MaxPageEntries = 200
	// MaxScanned is the most directory entries read from the file system
	// for one page (plus one more read to tell whether any were left out).
	MaxScanned = 1000
	// MaxBrowses is how many browses may be open at once; starting another
	// drops the one that expires first.
	MaxBrowses = 8
	// MaxRefs is the most references one browse mints; past it a page is
	// cut short and marked truncated.
	MaxRefs = 4096
	// MaxCursors is how many page cursors one browse keeps; the oldest are
	// dropped first.
	MaxCursors = 32
)

// Options configures a Service. The zero value browses this host.
type Options struct {
	// Roots yields the virtual roots; nil means HostRoots().
	Roots Roots
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time
}

// Service holds the browses of one control connection. It is safe for
// concurrent use.
type Service struct {
	roots Roots
	now   func() time.Time
	goos  string

	mu      sync.Mutex
	browses map[string]*browseState
}

type browseState struct {
	expires time.Time
	refs    map[string]*ref   // reference id → directory
	byPath  map[string]string // canonical path → reference id
	cursors map[string]cursor
	corder  []string // cursor ids, oldest first
}

// ref is a directory a reference names, as it was when listed.
type ref struct {
	name   string
	root   rootgrant.Root
	parent string // reference id of the listing it came from; "" for a root
}

// cursor resumes a listing after the entry with sort key after.
type cursor struct {
	ref   string
	after string
}

// New returns a Service.
func New(opts Options) *Service {
	s := &Service{roots: opts.Roots, now: opts.Now, goos: runtime.GOOS, browses: map[string]*browseState{}}
	if s.roots == nil {
		s.roots = HostRoots()
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Reset drops every browse, reference and cursor. The link calls it
// whenever the control connection is (re-)established.
func (s *Service) Reset() {
	s.mu.Lock()
	clear(s.browses)
	s.mu.Unlock()
}

// List answers a DIRECTORY_LIST_REQUEST: with both references nil it starts
// a browse and lists the virtual roots; otherwise it lists one page of the
// referenced directory. req must have been decoded by DecodeListRequest or
// be otherwise well formed; List checks its shape again.
func (s *Service) List(req browseapi.ListRequest) (browseapi.ListResponse, error) {
	if err := req.Check(); err != nil {
		return browseapi.ListResponse{}, err
	}
	if req.BrowseID == nil {
		return s.start(), nil
	}
	r, after, expires, err := s.lookup(*req.BrowseID, *req.DirectoryRef, req.Cursor)
	if err != nil {
		return browseapi.ListResponse{}, err
	}
	if err := recheck(r.root); err != nil {
		return browseapi.ListResponse{}, err
	}
	cands, truncated, err := s.scan(r.root.Path)
	if err != nil {
		return browseapi.ListResponse{}, err
	}
	i, _ := slices.BinarySearchFunc(cands, after, func(c child, k string) int { return strings.Compare(c.key, k) })
	if after != "" && i < len(cands) && cands[i].key == after {
		i++
	}
	page := cands[i:]
	more := len(page) > MaxPageEntries
	if more {
		page = page[:MaxPageEntries]
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.browses[*req.BrowseID]
	if b == nil {
		return browseapi.ListResponse{}, refInvalid("the browse ended while the directory was read")
	}
	resp := browseapi.ListResponse{
		BrowseID:  *req.BrowseID,
		Current:   &browseapi.Entry{DirectoryRef: *req.DirectoryRef, Name: r.name, Path: r.root.Path},
		Entries:   make([]browseapi.Entry, 0, len(page)),
		Truncated: truncated,
		ExpiresAt: unixSeconds(expires),
	}
	if r.parent != "" {
		p := r.parent
		resp.ParentRef = &p
	}
	for _, c := range page {
		id, ok := b.mint(ref{name: c.name, root: c.root, parent: *req.DirectoryRef})
		if !ok {
			resp.Truncated = true
			more = false
			break
		}
		resp.Entries = append(resp.Entries, browseapi.Entry{DirectoryRef: id, Name: c.name, Path: c.root.Path})
	}
	if more {
		cur := b.addCursor(cursor{ref: *req.DirectoryRef, after: page[len(page)-1].key})
		resp.NextCursor = &cur
	}
	return resp, nil
}

// Resolve returns the directory a reference names, re-checked now: it must
// still be the same accessible plain directory at the same canonical path.
func (s *Service) Resolve(browseID, directoryRef string) (rootgrant.Root, error) {
	if err := (browseapi.ListRequest{BrowseID: &browseID, DirectoryRef: &directoryRef}).Check(); err != nil {
		return rootgrant.Root{}, err
	}
	r, _, _, err := s.lookup(browseID, directoryRef, nil)
	if err != nil {
		return rootgrant.Root{}, err
	}
	if err := recheck(r.root); err != nil {
		return rootgrant.Root{}, err
	}
	return r.root, nil
}

// Consume resolves a reference chosen for ATTACH_SESSION (see Resolve) and
// ends its browse, so no reference of it can be used again. A reference
// that fails to resolve leaves the browse as it was.
func (s *Service) Consume(browseID, directoryRef string) (rootgrant.Root, error) {
	root, err := s.Resolve(browseID, directoryRef)
	if err != nil {
		return rootgrant.Root{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.browses[browseID]; !ok {
		return rootgrant.Root{}, refInvalid("the browse ended before it could be consumed")
	}
	delete(s.browses, browseID)
	return root, nil
}

// start begins a browse and lists the virtual roots.
func (s *Service) start() browseapi.ListResponse {
	var roots []ref
	seen := map[string]bool{}
	for _, c := range s.roots.Candidates() {
		if len(roots) == MaxPageEntries {
			break
		}
		root, err := rootgrant.Check(c.Path)
		if err != nil || !validPath(root.Path) {
			continue
		}
		key := root.Path
		if s.goos == "windows" || s.goos == "darwin" {
			key = strings.ToLower(key)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		name := c.Name
		if name == "" {
			name = displayName(root.Path)
		}
		roots = append(roots, ref{name: name, root: root})
	}

	now := s.now()
	b := &browseState{
		expires: now.Add(BrowseTTL),
		refs:    map[string]*ref{},
		byPath:  map[string]string{},
		cursors: map[string]cursor{},
	}
	resp := browseapi.ListResponse{BrowseID: newToken(), Entries: make([]browseapi.Entry, 0, len(roots)), ExpiresAt: unixSeconds(b.expires)}
	for _, r := range roots {
		id, _ := b.mint(r)
		resp.Entries = append(resp.Entries, browseapi.Entry{DirectoryRef: id, Name: r.name, Path: r.root.Path})
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.evict(now)
	for len(s.browses) >= MaxBrowses {
		var oldest string
		for id, ob := range s.browses {
			if oldest == "" || ob.expires.Before(s.browses[oldest].expires) {
				oldest = id
			}
		}
		delete(s.browses, oldest)
	}
	s.browses[resp.BrowseID] = b
	return resp
}

// lookup finds a live browse's reference and, if given, its cursor.
func (s *Service) lookup(browseID, directoryRef string, cur *string) (r ref, after string, expires time.Time, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evict(s.now())
	b := s.browses[browseID]
	if b == nil {
		return ref{}, "", time.Time{}, refInvalid("the browse is unknown, expired or consumed")
	}
	rp := b.refs[directoryRef]
	if rp == nil {
		return ref{}, "", time.Time{}, refInvalid("the directory reference is unknown in this browse")
	}
	if cur != nil {
		c, ok := b.cursors[*cur]
		if !ok || c.ref != directoryRef {
			return ref{}, "", time.Time{}, refInvalid("the page cursor is unknown or belongs to another directory")
		}
		after = c.after
	}
	return *rp, after, b.expires, nil
}

// evict drops expired browses. s.mu is held.
func (s *Service) evict(now time.Time) {
	for id, b := range s.browses {
		if !now.Before(b.expires) {
			delete(s.browses, id)
		}
	}
}

// mint returns the reference for r's directory, reusing one minted earlier
// in this browse, or false when the browse has MaxRefs already.
func (b *browseState) mint(r ref) (string, bool) {
	if id, ok := b.byPath[r.root.Path]; ok {
		if old := b.refs[id]; old.root == r.root {
			return id, true
		}
	}
	if len(b.refs) >= MaxRefs {
		return "", false
	}
	id := newToken()
	b.refs[id] = &r
	b.byPath[r.root.Path] = id
	return id, true
}

// addCursor returns a cursor for c, reusing an equal one.
func (b *browseState) addCursor(c cursor) string {
	for id, old := range b.cursors {
		if old == c {
			return id
		}
	}
	if len(b.corder) >= MaxCursors {
		delete(b.cursors, b.corder[0])
		b.corder = b.corder[1:]
	}
	id := newToken()
	b.cursors[id] = c
	b.corder = append(b.corder, id)
	return id
}

// recheck confirms a referenced directory is still what was listed.
func recheck(want rootgrant.Root) error {
	got, err := rootgrant.Check(want.Path)
	if err != nil {
		return err
	}
	if got.Path != want.Path || got.ID != want.ID {
		return unavailable("the directory was replaced since it was listed")
	}
	return nil
}

// child is a listable subdirectory.
type child struct {
	key  string // sort key: case-folded name, then the name itself
	name string
	root rootgrant.Root
}

// scan reads up to MaxScanned entries of dir and returns its listable
// subdirectories sorted by key, and whether entries were left unread.
func (s *Service) scan(dir string) ([]child, bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false, unavailable("the directory is not accessible")
	}
	defer f.Close()
	var out []child
	scanned := 0
	for scanned < MaxScanned {
		ents, err := f.ReadDir(min(256, MaxScanned-scanned))
		scanned += len(ents)
		for _, e := range ents {
			if c, ok := s.listable(dir, e); ok {
				out = append(out, c)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, unavailable("the directory could not be read")
		}
	}
	truncated := false
	if scanned >= MaxScanned {
		more, _ := f.ReadDir(1)
		truncated = len(more) > 0
	}
	slices.SortFunc(out, func(a, b child) int { return strings.Compare(a.key, b.key) })
	return out, truncated, nil
}

// listable reports whether directory entry e of dir is shown, and as what.
func (s *Service) listable(dir string, e os.DirEntry) (child, bool) {
	t := e.Type()
	if !t.IsDir() || t&(os.ModeSymlink|os.ModeIrregular) != 0 {
		return child{}, false
	}
	name := e.Name()
	if !validName(name) || systemChild(s.goos, dir, name) {
		return child{}, false
	}
	p := filepath.Join(dir, name)
	root, err := rootgrant.Check(p)
	if err != nil || root.Path != p {
		return child{}, false
	}
	return child{key: strings.ToLower(name) + "\x00" + name, name: name, root: root}, true
}

// displayName is a root's label: its last element, or the volume ("C:")
// for a drive root.
func displayName(p string) string {
	if b := filepath.Base(p); b != "" && b != string(filepath.Separator) && b != "." {
		return b
	}
	if v := filepath.VolumeName(p); v != "" {
		return v
	}
	return p
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// newToken returns a fresh random id: 144 bits, base64url, 24 characters.
func newToken() string {
	var b [18]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

package files

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// Paging never reads again what a listing has read (list_directory,
// find_files): the first page reads the directory (or walks the tree) and
// keeps what follows the page as a snapshot, briefly, under a random
// cursor; the next page is taken from the snapshot. A cursor is used once
// (the next page has a new one), lives cursorTTL, and at most maxCursors
// are kept (the oldest is dropped first). It belongs to the client that
// got it (its session, or its peer where the transport has no sessions) and to the same listing (operation,
// workdir, directory, filters): another client's cursor is as unknown as
// an expired one, and neither is consumed by a refused use.
const (
	cursorTTL  = time.Minute
	maxCursors = 64
	// maxKeptItems bounds the entries all snapshots hold together (about
	// 100 bytes each); past it, the oldest snapshots are dropped.
	maxKeptItems = 1 << 20
	// walkAhead bounds what a recursive listing reads beyond its page: a
	// tree larger than that is walked on, later, from where the snapshot
	// ends (skipping every subtree before it), not read whole up front.
	walkAhead = 50_000
)

// item is one entry of a listing as the directory read gave it: its path
// relative to the listed directory and its type.
type item struct {
	rel string
	typ uint32 // fs.FileMode's type bits
}

// listSnapshot is what a listing has read and not yet returned.
type listSnapshot struct {
	owner   string // the client (see cursorOwner)
	listing string // the listing it continues (see listingKey)
	created time.Time
	seq     uint64 // order of keeping: the lowest goes first
	items   []item
	// resume, when not nil, is where a recursive walk stopped (the
	// components of the last item read): the entries after items.
	resume []string
}

// cursors holds the snapshots of listings in progress.
type cursors struct {
	mu   sync.Mutex
	m    map[string]*listSnapshot
	kept int    // items in all snapshots
	seq  uint64 // of the last one kept
	now  func() time.Time
}

func newCursors() *cursors { return &cursors{m: map[string]*listSnapshot{}, now: time.Now} }

// cursorOwner names the client a cursor is for, as its transport
// measured it, never by a name the client chose: its session (a random
// key the transport made for one MCP session or control connection), or
// on a transport without sessions its peer. (Not the peer beside the
// session: an HTTP session's requests may come over several connections.)
func cursorOwner(c *ops.Call) string {
	if c.Session != "" {
		return string(c.Transport) + "\x00session\x00" + c.Session
	}
	return string(c.Transport) + "\x00peer\x00" + c.Peer
}

// errCursorExpired is the one answer for a cursor that is not (or no
// longer) this client's to use.
func errCursorExpired() error {
	return errcode.New(errcode.CursorExpired, "the cursor is unknown, expired or already used; list again without a cursor")
}

// put keeps s and returns its cursor.
func (cs *cursors) put(s *listSnapshot) string {
	var raw [16]byte
	rand.Read(raw[:])
	token := base64.RawURLEncoding.EncodeToString(raw[:])
	cs.mu.Lock()
	defer cs.mu.Unlock()
	now := cs.now()
	cs.seq++
	s.created, s.seq = now, cs.seq
	for k, o := range cs.m {
		if now.Sub(o.created) >= cursorTTL {
			cs.drop(k)
		}
	}
	for len(cs.m) >= maxCursors || len(cs.m) > 0 && cs.kept+len(s.items) > maxKeptItems {
		oldest := ""
		for k, o := range cs.m {
			if oldest == "" || o.seq < cs.m[oldest].seq {
				oldest = k
			}
		}
		cs.drop(oldest)
	}
	cs.m[token] = s
	cs.kept += len(s.items)
	return token
}

func (cs *cursors) drop(k string) {
	cs.kept -= len(cs.m[k].items)
	delete(cs.m, k)
}

// take returns and forgets the snapshot of cursor, if owner may continue
// listing with it.
func (cs *cursors) take(cursor, owner, listing string) (*listSnapshot, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	s, ok := cs.m[cursor]
	switch {
	case !ok || s.owner != owner:
		return nil, errCursorExpired()
	case cs.now().Sub(s.created) >= cursorTTL:
		cs.drop(cursor)
		return nil, errCursorExpired()
	case s.listing != listing:
		return nil, errcode.New(errcode.InvalidArgument, "the cursor continues another listing; pass the same workdir, path and filters")
	}
	cs.drop(cursor)
	return s, nil
}

// len is the number of cursors kept.
func (cs *cursors) len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.m)
}

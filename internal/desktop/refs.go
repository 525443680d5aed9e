package desktop

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// maxRefs bounds the references kept; the oldest go first.
const maxRefs = 256

// frame is what an observation showed and how its image maps to native
// coordinates: native = Origin + image / Scale.
type frame struct {
	Origin native.Rect // the native rectangle captured
	Scale  float64     // image pixels per native unit
	W, H   int         // image size
}

// toNative maps an image point to native coordinates.
func (f frame) toNative(x, y int) (int, int) {
	return f.Origin.X + int(float64(x)/f.Scale), f.Origin.Y + int(float64(y)/f.Scale)
}

// toImage maps a native rectangle to image coordinates.
func (f frame) toImage(r native.Rect) native.Rect {
	return native.Rect{
		X: int(float64(r.X-f.Origin.X) * f.Scale), Y: int(float64(r.Y-f.Origin.Y) * f.Scale),
		W: int(float64(r.W) * f.Scale), H: int(float64(r.H) * f.Scale),
	}
}

// observation is a reference's record. It holds no pixels: images belong to
// the request that produced them.
type observation struct {
	id        string
	transport audit.Transport
	desktop   string
	frame     frame
	monitor   int // the monitor asked for, -1 for all
	state     native.State
	windows   map[string]native.Window // window references
	expires   time.Time
	consumed  bool
	seq       uint64
	// image is the encoded capture, kept for the newest keepPixels
	// observations only (see ActImage).
	image ops.Image
}

type refStore struct {
	mu  sync.Mutex
	m   map[string]*observation
	seq uint64
}

func newRefStore() *refStore { return &refStore{m: make(map[string]*observation)} }

func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// add stores o, dropping expired references and, past maxRefs, the oldest.
func (s *refStore) add(o *observation, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	o.seq = s.seq
	for id, r := range s.m {
		if now.After(r.expires.Add(MaxRefTTL)) {
			delete(s.m, id)
		}
	}
	for len(s.m) >= maxRefs {
		var oldest *observation
		for _, r := range s.m {
			if oldest == nil || r.seq < oldest.seq {
				oldest = r
			}
		}
		delete(s.m, oldest.id)
	}
	s.m[o.id] = o
	for _, r := range s.m {
		if r.seq+keepPixels <= s.seq {
			r.image = ops.Image{}
		}
	}
}

// get returns a live reference of this transport, without consuming it.
func (s *refStore) get(id string, transport audit.Transport, now time.Time) (*observation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.check(id, transport, now)
}

func (s *refStore) check(id string, transport audit.Transport, now time.Time) (*observation, error) {
	o, ok := s.m[id]
	if !ok || o.transport != transport {
		return nil, errcode.New(ObservationUnknown, "observation %q was not issued to this caller by this hostlink; observe again", trunc(id))
	}
	if o.consumed {
		return nil, errcode.New(ObservationConsumed, "observation %q was already used by an act; observe again", trunc(id))
	}
	if !now.Before(o.expires) {
		return nil, errcode.New(ObservationExpired, "observation %q expired; observe again", trunc(id))
	}
	return o, nil
}

// consume checks and consumes a reference in one step, so two acts can
// never both use it.
func (s *refStore) consume(id string, transport audit.Transport, now time.Time) (*observation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.check(id, transport, now)
	if err != nil {
		return nil, err
	}
	o.consumed = true
	return o, nil
}

// release gives a consumed reference back: the act that consumed it was
// refused before anything was dispatched, so the observation still shows
// the desktop as it is.
func (s *refStore) release(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.m[id]; ok {
		o.consumed = false
	}
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

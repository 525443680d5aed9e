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
	"github.com/hostlink/hostlink/internal/textsafe"
)

// maxRefs bounds the references kept; the oldest go first.
const maxRefs = 256

// frame is what an observation showed and how its image maps to native
// coordinates. The image's W×H pixels cover the native rectangle Origin
// exactly, whatever the monitors' scale and the scaling down to max_edge
// made of it: image edge x is native edge Origin.X + x·Origin.W/W (and so
// in y). Every mapping is in integers, so it is the same on every OS.
type frame struct {
	Origin native.Rect // the native rectangle captured
	Scale  float64     // the capture's pixels per native unit (the monitors' scale), before scaling to the image
	W, H   int         // image size
}

// floorDiv and ceilDiv divide with rounding down and up (b > 0).
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func ceilDiv(a, b int) int { return -floorDiv(-a, b) }

// toNative maps an image point to the native pixel it denotes: the one
// under the image pixel's centre.
func (f frame) toNative(x, y int) (int, int) {
	return f.Origin.X + floorDiv((2*x+1)*f.Origin.W, 2*f.W), f.Origin.Y + floorDiv((2*y+1)*f.Origin.H, 2*f.H)
}

// toImagePoint maps a native pixel to the image pixel under its centre.
func (f frame) toImagePoint(x, y int) (int, int) {
	return floorDiv((2*(x-f.Origin.X)+1)*f.W, 2*f.Origin.W), floorDiv((2*(y-f.Origin.Y)+1)*f.H, 2*f.Origin.H)
}

// toImage maps a native rectangle to the image pixels it touches.
func (f frame) toImage(r native.Rect) native.Rect {
	x0, y0 := floorDiv((r.X-f.Origin.X)*f.W, f.Origin.W), floorDiv((r.Y-f.Origin.Y)*f.H, f.Origin.H)
	x1, y1 := ceilDiv((r.X+r.W-f.Origin.X)*f.W, f.Origin.W), ceilDiv((r.Y+r.H-f.Origin.Y)*f.H, f.Origin.H)
	return native.Rect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
}

// toNativeRect maps an image rectangle to the native rectangle it covers
// (the smallest holding every native pixel the image pixels show).
func (f frame) toNativeRect(r native.Rect) native.Rect {
	x0, y0 := floorDiv(r.X*f.Origin.W, f.W), floorDiv(r.Y*f.Origin.H, f.H)
	x1, y1 := ceilDiv((r.X+r.W)*f.Origin.W, f.W), ceilDiv((r.Y+r.H)*f.Origin.H, f.H)
	return native.Rect{X: f.Origin.X + x0, Y: f.Origin.Y + y0, W: x1 - x0, H: y1 - y0}
}

// observation is a reference's record. It holds no pixels: images belong to
// the request that produced them.
type observation struct {
	id        string
	transport audit.Transport
	desktop   string
	frame     frame
	monitor   int // the monitor asked for, -1 for all
	maxEdge   int // the image's longest edge asked for; the act's fresh observation keeps it
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

// trunc bounds a caller's value or a window's title quoted back in an
// error or a detail, never splitting a character.
func trunc(s string) string { return textsafe.Clip(s, 40) }

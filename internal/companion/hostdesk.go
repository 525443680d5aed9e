package companion

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/errcode"
)

// deskInfo describes one of the companion's desktops to the runtime.
type deskInfo struct {
	ID    string `json:"id"`
	Space string `json:"space"`
}

// wireWindow is native.Window with the fields its JSON form hides, which
// the runtime needs to hand back for focus and to judge staleness.
type wireWindow struct {
	native.Window
	Handle  uint64 `json:"handle"`
	Created int64  `json:"created"`
}

func toWire(ws []native.Window) []wireWindow {
	out := make([]wireWindow, len(ws))
	for i, w := range ws {
		out[i] = wireWindow{Window: w, Handle: w.Handle, Created: w.Created}
	}
	return out
}

func fromWire(ws []wireWindow) []native.Window {
	out := make([]native.Window, len(ws))
	for i, w := range ws {
		out[i] = w.native()
	}
	return out
}

func (w wireWindow) native() native.Window {
	n := w.Window
	n.Handle, n.Created = w.Handle, w.Created
	return n
}

// wireState is native.State with its focus handle.
type wireState struct {
	Session  string           `json:"session"`
	Monitors []native.Monitor `json:"monitors"`
	Focus    uint64           `json:"focus"`
	FocusBox native.Rect      `json:"focus_box"`
	Locked   bool             `json:"locked"`
}

type deskParams struct {
	Desktop string        `json:"desktop"`
	Rect    native.Rect   `json:"rect"`
	Scale   float64       `json:"scale"`
	Steps   []native.Step `json:"steps,omitempty"`
	Window  *wireWindow   `json:"window,omitempty"`
	Max     int           `json:"max,omitempty"`
}

type dispatchResult struct {
	N     int            `json:"n"`
	Error *errcode.Error `json:"error,omitempty"`
	// Native names the sentinel behind Error (see nativeErrors).
	Native string `json:"native,omitempty"`
}

// desktopCall runs one Backend method on a desktop of the host. Calls are
// serialized, as a Backend requires; the runtime's queue already orders
// them per physical desktop.
func (h *host) desktopCall(ctx context.Context, method string, params json.RawMessage) (any, []byte, error) {
	if method == "list" {
		out := []deskInfo{}
		for id, b := range h.desktops {
			out = append(out, deskInfo{ID: id, Space: b.Space()})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
		return out, nil, nil
	}
	a, err := decode[deskParams](params)
	if err != nil {
		return nil, nil, err
	}
	b := h.desktops[a.Desktop]
	if b == nil {
		return nil, nil, errNoDesktop
	}
	h.desktopMu.Lock()
	defer h.desktopMu.Unlock()
	switch method {
	case "status":
		return b.Status(ctx), nil, nil
	case "state":
		st, err := b.State(ctx)
		return wireState{Session: st.Session, Monitors: st.Monitors, Focus: st.Focus, FocusBox: st.FocusBox, Locked: st.Locked}, nil, err
	case "monitors":
		ms, err := b.Monitors(ctx)
		return ms, nil, err
	case "windows":
		ws, err := b.Windows(ctx)
		return toWire(ws), nil, err
	case "cursor":
		x, y, err := b.Cursor(ctx)
		return [2]int{x, y}, nil, err
	case "dispatch":
		n, err := b.Dispatch(ctx, a.Steps)
		res := dispatchResult{N: n}
		if err != nil {
			var eh header
			errorHeader(&eh, err)
			res.Error, res.Native = eh.Error, eh.Native
		}
		return res, nil, nil
	case "focus":
		if a.Window == nil {
			return nil, nil, errcode.New(errcode.InvalidArgument, "focus needs a window")
		}
		return struct{}{}, nil, b.Focus(ctx, a.Window.native())
	case "accessibility":
		text, err := b.Accessibility(ctx, a.Max)
		return text, nil, err
	case "capture":
		img, err := b.Capture(ctx, a.Rect, a.Scale)
		if err != nil {
			return nil, nil, err
		}
		return h.frames.put(img.Pix, img.Rect.Dx(), img.Rect.Dy(), img.Stride), nil, nil
	}
	return nil, nil, errcode.New(errcode.UnknownOperation, "unknown desktop method %q", method)
}

// frames holds screen captures until the runtime has fetched them: one
// frame at a time (a new capture replaces and erases the previous one),
// erased after its last chunk is read, on frame.close, after an idle
// timeout, and when the connection ends.
type frames struct {
	idle time.Duration

	mu     sync.Mutex
	cur    *frame
	erased int // frames erased so far, for tests
}

type frame struct {
	id      string
	pix     []byte
	touched time.Time
}

// frameInfo is desktop.capture's response.
type frameInfo struct {
	FrameID string `json:"frame_id"`
	Width   int    `json:"width"`
	Height  int    `json:"height"`
	Stride  int    `json:"stride"`
	Bytes   int    `json:"bytes"`
	SHA256  string `json:"sha256"`
	Chunks  int    `json:"chunks"`
}

type frameRead struct {
	FrameID string `json:"frame_id"`
	Index   int    `json:"index"`
}

type frameChunk struct {
	Index  int    `json:"index"`
	Offset int    `json:"offset"`
	Length int    `json:"length"`
	SHA256 string `json:"sha256"`
}

func newFrames(idle time.Duration) *frames { return &frames{idle: idle} }

func (f *frames) put(pix []byte, w, h, stride int) frameInfo {
	sum := sha256.Sum256(pix)
	fr := &frame{id: "frm_" + randomToken(10), pix: pix, touched: time.Now()}
	f.mu.Lock()
	f.eraseLocked()
	f.cur = fr
	f.mu.Unlock()
	return frameInfo{FrameID: fr.id, Width: w, Height: h, Stride: stride, Bytes: len(pix),
		SHA256: hex.EncodeToString(sum[:]), Chunks: (len(pix) + MaxChunk - 1) / MaxChunk}
}

// eraseLocked overwrites and drops the current frame.
func (f *frames) eraseLocked() {
	if f.cur == nil {
		return
	}
	clear(f.cur.pix)
	f.cur = nil
	f.erased++
}

func (f *frames) handle(method string, params json.RawMessage) (any, []byte, error) {
	a, err := decode[frameRead](params)
	if err != nil {
		return nil, nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur == nil || f.cur.id != a.FrameID {
		return nil, nil, errcode.New(errcode.InvalidArgument, "frame %q is gone (replaced, closed or expired)", a.FrameID)
	}
	if method == "frame.close" {
		f.eraseLocked()
		return struct{}{}, nil, nil
	}
	off := a.Index * MaxChunk
	if a.Index < 0 || off >= len(f.cur.pix) {
		return nil, nil, errcode.New(errcode.InvalidArgument, "no chunk %d", a.Index)
	}
	end := min(off+MaxChunk, len(f.cur.pix))
	data := append([]byte(nil), f.cur.pix[off:end]...)
	sum := sha256.Sum256(data)
	f.cur.touched = time.Now()
	if end == len(f.cur.pix) {
		f.eraseLocked() // transferred
	}
	return frameChunk{Index: a.Index, Offset: off, Length: len(data), SHA256: hex.EncodeToString(sum[:])}, data, nil
}

// expireLoop erases an abandoned frame after the idle time, until done.
func (f *frames) expireLoop(done <-chan struct{}) {
	t := time.NewTicker(max(f.idle/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			f.mu.Lock()
			if f.cur != nil && time.Since(f.cur.touched) > f.idle {
				f.eraseLocked()
			}
			f.mu.Unlock()
		}
	}
}

func (f *frames) closeAll() {
	f.mu.Lock()
	f.eraseLocked()
	f.mu.Unlock()
}

package companion

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/errcode"
)

// remoteBackend is a companion's desktop as a native.Backend on the
// runtime: every method is a request over the companion's connection.
// Its id is the companion's, so it stays distinct from a native desktop
// of the same OS; its queue (see Desktops.Attach) is the inner desktop's.
type remoteBackend struct {
	s     *Session
	inner string // the desktop's id on the companion
	space string
}

func (b *remoteBackend) ID() string    { return "companion:" + b.s.ID + "/" + b.inner }
func (b *remoteBackend) Space() string { return b.space }

func (b *remoteBackend) call(ctx context.Context, method string, p deskParams, out any) ([]byte, error) {
	p.Desktop = b.inner
	return b.s.p.call(ctx, "desktop."+method, p, out)
}

func (b *remoteBackend) Status(ctx context.Context) native.Status {
	var st native.Status
	if _, err := b.call(ctx, "status", deskParams{}, &st); err != nil {
		gone := native.Readiness{Reason: "companion_disconnected", Detail: "the companion's connection is gone"}
		return native.Status{Capture: gone, Input: gone, Windows: gone, Accessibility: gone}
	}
	return st
}

func (b *remoteBackend) State(ctx context.Context) (native.State, error) {
	var st wireState
	_, err := b.call(ctx, "state", deskParams{}, &st)
	return native.State{Session: st.Session, Monitors: st.Monitors, Focus: st.Focus, FocusBox: st.FocusBox, Locked: st.Locked}, err
}

func (b *remoteBackend) Monitors(ctx context.Context) ([]native.Monitor, error) {
	var ms []native.Monitor
	_, err := b.call(ctx, "monitors", deskParams{}, &ms)
	return ms, err
}

func (b *remoteBackend) Windows(ctx context.Context) ([]native.Window, error) {
	var ws []wireWindow
	_, err := b.call(ctx, "windows", deskParams{}, &ws)
	return fromWire(ws), err
}

func (b *remoteBackend) Cursor(ctx context.Context) (int, int, error) {
	var p [2]int
	_, err := b.call(ctx, "cursor", deskParams{}, &p)
	return p[0], p[1], err
}

func (b *remoteBackend) Dispatch(ctx context.Context, steps []native.Step) (int, error) {
	var res dispatchResult
	if _, err := b.call(ctx, "dispatch", deskParams{Steps: steps}, &res); err != nil {
		return 0, err
	}
	if res.Error != nil {
		return res.N, wireError(header{Error: res.Error, Native: res.Native})
	}
	return res.N, nil
}

func (b *remoteBackend) Focus(ctx context.Context, w native.Window) error {
	ww := wireWindow{Window: w, Handle: w.Handle, Created: w.Created}
	_, err := b.call(ctx, "focus", deskParams{Window: &ww}, nil)
	return err
}

func (b *remoteBackend) Accessibility(ctx context.Context, max int) (string, error) {
	var text string
	_, err := b.call(ctx, "accessibility", deskParams{Max: max}, &text)
	return text, err
}

// Capture asks the companion for the pixels and fetches them in verified
// 64 KiB chunks. The companion erases its copy after the last chunk.
func (b *remoteBackend) Capture(ctx context.Context, r native.Rect, scale float64) (*image.RGBA, error) {
	var fi frameInfo
	if _, err := b.call(ctx, "capture", deskParams{Rect: r, Scale: scale}, &fi); err != nil {
		return nil, err
	}
	bad := func(what string) error {
		b.s.p.call(ctx, "frame.close", frameRead{FrameID: fi.FrameID}, nil)
		return errcode.New(CodeTransferFailed, "the companion's screen image failed verification: %s", what)
	}
	if fi.Width <= 0 || fi.Height <= 0 || fi.Stride < 4*fi.Width || fi.Bytes != fi.Stride*fi.Height ||
		fi.Chunks != (fi.Bytes+MaxChunk-1)/MaxChunk {
		return nil, bad("inconsistent geometry")
	}
	pix := make([]byte, 0, fi.Bytes)
	whole := sha256.New()
	for i := 0; i < fi.Chunks; i++ {
		var ch frameChunk
		data, err := b.s.p.call(ctx, "frame.read", frameRead{FrameID: fi.FrameID, Index: i}, &ch)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		if ch.Index != i || ch.Offset != len(pix) || ch.Length != len(data) || ch.SHA256 != hex.EncodeToString(sum[:]) {
			return nil, bad("chunk " + itoa(i))
		}
		pix = append(pix, data...)
		whole.Write(data)
	}
	if hex.EncodeToString(whole.Sum(nil)) != fi.SHA256 {
		return nil, bad("whole image hash")
	}
	return &image.RGBA{Pix: pix, Stride: fi.Stride, Rect: image.Rect(0, 0, fi.Width, fi.Height)}, nil
}

// Close leaves the connection alone: the session owns it.
func (b *remoteBackend) Close() error { return nil }

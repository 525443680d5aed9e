//go:build linux

package wayland

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"math"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
	"golang.org/x/sys/unix"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/procs"
)

// Bounds of one capture.
const (
	// captureTimeout: a capture of a stream the compositor has ended
	// hangs forever without one. The first capture of a user builds
	// GStreamer's registry and shader caches (under a second here).
	captureTimeout = 15 * time.Second
	// maxFrameBytes bounds the frame gst-launch may write: an 8K monitor
	// as RGBA.
	maxFrameBytes = 7680 * 4320 * 4
	// maxDump bounds pw-dump's output for one node.
	maxDump = 1 << 20
)

// grab captures one fresh frame of s's stream: a new pipewiresrc consumer
// on a new PipeWire connection from the portal, targeting the stream's
// serial. The frame is accepted only if its buffer timestamp is later than
// the moment the capture started. GStreamer writes it as raw RGBA (PNG
// encoding there doubled a capture's time); its size is the monitor's at
// the session's scale, or, for the session's first frame (scale 0), what
// the byte count says at the monitor's aspect.
func (b *Backend) grab(ctx context.Context, s *session) (*image.RGBA, error) {
	ctx, cancel := context.WithTimeout(ctx, captureTimeout)
	defer cancel()
	start, err := monotonic()
	if err != nil {
		return nil, err
	}
	f, err := b.pipewireRemote(ctx, s)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := &limitBuffer{max: maxFrameBytes}
	log := &ptsLog{}
	st, err := run(ctx, procs.Spec{
		Argv: []string{b.deps.gst, "-q",
			"pipewiresrc", "fd=3", "target-object=" + strconv.FormatUint(s.serial, 10), "num-buffers=1", "always-copy=true",
			"!", "videoconvert", "!", "video/x-raw,format=RGBA", "!", "fdsink", "fd=1"},
		Dir: "/",
		// pipewiresrc logs each dequeued buffer's timestamp at level 6.
		Env:        map[string]string{"GST_DEBUG": "pipewiresrc:6", "GST_DEBUG_NO_COLOR": "1"},
		ExtraFiles: []*os.File{f},
	}, out, log)
	if errors.Is(err, context.DeadlineExceeded) {
		if s.serial != 0 && !b.isClosed(s) {
			// No frame: ask PipeWire whether the stream is still there,
			// as the watch would have said.
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
			serial, lerr := b.serialOf(lctx, s.node)
			cancel()
			if lerr != nil || serial != s.serial {
				b.streamLost(s, fmt.Sprintf("no frame came from the shared stream within %v and its PipeWire node %d is gone", captureTimeout, s.node))
			}
		}
		if b.isClosed(s) {
			b.mu.Lock()
			defer b.mu.Unlock()
			return nil, b.refusal()
		}
		return nil, native.Refuse(native.ErrUnavailable, ReasonCaptureTimeout,
			"no frame came from the shared stream within the capture deadline; the compositor may have ended it")
	}
	if err != nil {
		return nil, err
	}
	if st.ExitCode != 0 || out.over {
		return nil, fmt.Errorf("gst-launch-1.0 failed (exit %d): %s", st.ExitCode, log.tail())
	}
	if err := fresh(log, start); err != nil {
		return nil, err
	}
	return rawFrame(out.Bytes(), s.monitor.Bounds, s.monitor.Scale)
}

// rawFrame turns GStreamer's RGBA bytes into an image of the monitor mon
// at scale (0: the scale the byte count implies, the aspect kept). A frame
// of any other size means the stream changed, which closes the session.
func rawFrame(pix []byte, mon native.Rect, scale float64) (*image.RGBA, error) {
	if scale == 0 && mon.W > 0 && mon.H > 0 {
		scale = math.Sqrt(float64(len(pix)) / float64(4*mon.W*mon.H))
	}
	w, h := int(math.Round(float64(mon.W)*scale)), int(math.Round(float64(mon.H)*scale))
	if w <= 0 || h <= 0 || len(pix) != w*h*4 {
		return nil, native.Refuse(native.ErrSessionClosed, ReasonClosed,
			fmt.Sprintf("the shared stream's frame (%d bytes) is not the %dx%d monitor the session started with; observe again", len(pix), mon.W, mon.H))
	}
	for i := 3; i < len(pix); i += 4 {
		pix[i] = 0xff
	}
	return &image.RGBA{Pix: pix, Stride: 4 * w, Rect: image.Rect(0, 0, w, h)}, nil
}

// fresh accepts a frame only if pipewiresrc logged its timestamp and it is
// later than start (both CLOCK_MONOTONIC nanoseconds).
func fresh(log *ptsLog, start int64) error {
	pts, ok := log.first()
	if !ok || pts <= start {
		return native.Refuse(native.ErrUnavailable, ReasonFreshFrame,
			"the stream gave no frame provably newer than the request (its timestamp is missing or older)")
	}
	return nil
}

func (b *Backend) isClosed(s *session) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sess == s && b.phase == closed
}

// pipewireRemote asks the portal for a new connection to PipeWire that
// reaches the session's stream only.
func (b *Backend) pipewireRemote(ctx context.Context, s *session) (*os.File, error) {
	var fd dbus.UnixFD
	if err := b.portal.call(ctx, ifCast+".OpenPipeWireRemote", s.handle, map[string]dbus.Variant{}).Store(&fd); err != nil {
		if b.isClosed(s) {
			b.mu.Lock()
			defer b.mu.Unlock()
			return nil, b.refusal()
		}
		return nil, fmt.Errorf("OpenPipeWireRemote: %w", err)
	}
	return os.NewFile(uintptr(fd), "pipewire-remote"), nil
}

// serialOf reads the object serial of a PipeWire node with pw-dump. Node
// ids are reused as streams come and go; serials are not, so a capture by
// serial can never reach another stream.
func (b *Backend) serialOf(ctx context.Context, node uint32) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	out := &limitBuffer{max: maxDump}
	env := map[string]string{}
	if b.cfg.RuntimeDir != "" {
		env["XDG_RUNTIME_DIR"] = b.cfg.RuntimeDir
	}
	st, err := run(ctx, procs.Spec{Argv: []string{b.deps.pwdump, "-N", strconv.FormatUint(uint64(node), 10)}, Dir: "/", Env: env}, out, nil)
	if err != nil {
		return 0, fmt.Errorf("pw-dump: %w", err)
	}
	if st.ExitCode != 0 || out.over {
		return 0, fmt.Errorf("pw-dump failed (exit %d)", st.ExitCode)
	}
	return parseSerial(out.Bytes(), node)
}

// parseSerial finds node's object.serial in pw-dump's JSON.
func parseSerial(dump []byte, node uint32) (uint64, error) {
	var objs []struct {
		ID   uint32 `json:"id"`
		Type string `json:"type"`
		Info struct {
			Props map[string]json.RawMessage `json:"props"`
		} `json:"info"`
	}
	if err := json.Unmarshal(dump, &objs); err != nil {
		return 0, fmt.Errorf("pw-dump: %w", err)
	}
	for _, o := range objs {
		if o.ID != node || o.Type != "PipeWire:Interface:Node" {
			continue
		}
		raw, ok := o.Info.Props["object.serial"]
		if !ok {
			break
		}
		var n uint64
		if err := json.Unmarshal(raw, &n); err != nil {
			return 0, fmt.Errorf("pw-dump: object.serial %s", raw)
		}
		return n, nil
	}
	return 0, native.Refuse(native.ErrUnavailable, ReasonPortalFailed,
		fmt.Sprintf("PipeWire has no serial for the shared stream's node %d", node))
}

// crop returns r (native coordinates) of frame, which shows the monitor
// mon, at scale image pixels per native unit. Parts outside the monitor
// are black.
func crop(frame *image.RGBA, mon native.Rect, r native.Rect, scale float64) (*image.RGBA, error) {
	fw, fh := frame.Rect.Dx(), frame.Rect.Dy()
	if fw != int(math.Round(float64(mon.W)*scale)) || fh != int(math.Round(float64(mon.H)*scale)) {
		return nil, native.Refuse(native.ErrSessionClosed, ReasonClosed,
			fmt.Sprintf("the shared stream is %dx%d, not the %dx%d the session started with; observe again", fw, fh, mon.W, mon.H))
	}
	out := image.NewRGBA(image.Rect(0, 0, int(float64(r.W)*scale), int(float64(r.H)*scale)))
	for i := 3; i < len(out.Pix); i += 4 {
		out.Pix[i] = 0xff
	}
	in := r.Intersect(mon)
	if in.Empty() {
		return out, nil
	}
	src := image.Rect(int(float64(in.X-mon.X)*scale), int(float64(in.Y-mon.Y)*scale),
		int(float64(in.X+in.W-mon.X)*scale), int(float64(in.Y+in.H-mon.Y)*scale)).Add(frame.Rect.Min)
	dst := image.Pt(int(float64(in.X-r.X)*scale), int(float64(in.Y-r.Y)*scale))
	draw.Draw(out, image.Rectangle{Min: dst, Max: dst.Add(src.Size())}, frame, src.Min, draw.Src)
	return out, nil
}

// monotonic is CLOCK_MONOTONIC in nanoseconds, the clock of PipeWire's
// buffer timestamps.
func monotonic() (int64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, err
	}
	return ts.Nano(), nil
}

// limitBuffer keeps up to max bytes and notes whether more came.
type limitBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (l *limitBuffer) Write(p []byte) (int, error) {
	if l.Len()+len(p) > l.max {
		l.over = true
		return len(p), nil
	}
	return l.Buffer.Write(p)
}

// ptsLog reads pipewiresrc's debug log as gst-launch writes it: it keeps
// the first dequeued buffer's pts and the last lines for error messages.
type ptsLog struct {
	mu    sync.Mutex
	line  []byte
	pts   int64
	found bool
	last  []string
}

// ptsLine matches pipewiresrc's "dequeue_buffer ... pts N" (nanoseconds,
// CLOCK_MONOTONIC as the compositor stamped the frame).
var ptsLine = regexp.MustCompile(`dequeue_buffer.*\bpts (\d+)`)

func (l *ptsLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range p {
		if c != '\n' {
			if len(l.line) < 4096 {
				l.line = append(l.line, c)
			}
			continue
		}
		if m := ptsLine.FindSubmatch(l.line); m != nil && !l.found {
			if n, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil {
				l.pts, l.found = n, true
			}
		}
		l.last = append(l.last, string(l.line))
		if len(l.last) > 8 {
			l.last = l.last[1:]
		}
		l.line = l.line[:0]
	}
	return len(p), nil
}

func (l *ptsLog) first() (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pts, l.found
}

func (l *ptsLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.last)
}

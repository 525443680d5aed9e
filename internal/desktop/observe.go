package desktop

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	xdraw "golang.org/x/image/draw"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/opsapi"
)

// framing says what to capture: a native rectangle at a scale, the
// monitor it was asked as (-1 for all or a region) and the longest image
// edge wanted.
type framing struct {
	rect    native.Rect
	scale   float64
	monitor int
	maxEdge int
}

// rawBudget bounds the uncompressed image of one request, so that with its
// encoding the request stays inside the image limit per request: an image
// over it is scaled down further.
const rawBudget = ops.MaxImageBytesTotal - ops.MaxImageBytes

// maxCaptureBytes bounds the native capture an image is scaled from, held
// only while it is scaled: two 8K monitors' RGBA, more than any desktop
// measured. Only a capture beyond it is IMAGE_TOO_LARGE.
const maxCaptureBytes = 2 * 8192 * 4352 * 4

// imageSize is the size of the image of a w×h capture: scaled down, keeping
// its aspect, so that its longest edge is at most maxEdge and its RGBA
// fits rawBudget; never scaled up.
func imageSize(w, h, maxEdge int) (int, int) {
	k := 1.0
	if m := max(w, h); m > maxEdge {
		k = float64(maxEdge) / float64(m)
	}
	if px := float64(w) * float64(h) * k * k; px*4 > rawBudget {
		k *= math.Sqrt(rawBudget / 4 / px)
	}
	if k >= 1 {
		return w, h
	}
	return max(1, min(w, int(float64(w)*k))), max(1, min(h, int(float64(h)*k)))
}

// scaleImage returns img scaled to w×h with a Catmull-Rom filter (img
// itself if it has that size).
func scaleImage(img *image.RGBA, w, h int) *image.RGBA {
	if img.Rect.Dx() == w && img.Rect.Dy() == h {
		return img
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.CatmullRom.Scale(dst, dst.Rect, img, img.Rect, xdraw.Src, nil)
	return dst
}

func (s *Service) observe(ctx context.Context, c *ops.Call, a desktopapi.ObserveArgs) (*desktopapi.Observation, error) {
	if a.Quality < 0 || a.Quality > 100 {
		return nil, errcode.New(errcode.InvalidArgument, "quality must be 1-100")
	}
	if a.MaxEdge < 0 || a.MaxEdge > desktopapi.MaxMaxEdge {
		return nil, errcode.New(errcode.InvalidArgument, "max_edge must be 1-%d", desktopapi.MaxMaxEdge)
	}
	if a.MaxEdge == 0 {
		a.MaxEdge = desktopapi.DefaultMaxEdge
	}
	var from *observation
	if a.Region != nil {
		o, err := s.refs.get(a.Region.ObservationID, c.Transport, s.opts.now())
		if err != nil {
			return nil, err
		}
		if a.Desktop != "" && a.Desktop != o.desktop {
			return nil, errcode.New(errcode.InvalidArgument, "the region's observation is of desktop %q", o.desktop)
		}
		from, a.Desktop = o, o.desktop
	}
	d, err := s.desk(ctx, a.Desktop)
	if err != nil {
		return nil, err
	}
	if err := d.lock(ctx); err != nil {
		return nil, err
	}
	defer d.unlock()
	if err := begin(ctx, d.b); err != nil {
		return nil, nativeErr(err, "opening the desktop session")
	}
	mons, err := d.b.Monitors(ctx)
	if err != nil {
		s.drop(d, err)
		return nil, nativeErr(err, "listing monitors")
	}
	fr, err := frameFor(a, from, mons)
	if err != nil {
		return nil, err
	}
	fr.maxEdge = a.MaxEdge
	c.Detail("desktop", d.b.ID())
	c.Detail("rect", fr.rect)
	return s.capture(ctx, c, d, fr, a)
}

// frameFor works out the native rectangle an observation request asks for.
func frameFor(a desktopapi.ObserveArgs, from *observation, mons []native.Monitor) (framing, error) {
	switch {
	case from != nil:
		if a.Monitor != nil && *a.Monitor != -1 {
			return framing{}, errcode.New(errcode.InvalidArgument, "give a monitor or a region, not both")
		}
		r, f := a.Region, from.frame
		img := native.Rect{W: f.W, H: f.H}
		sel := native.Rect{X: r.X, Y: r.Y, W: r.W, H: r.H}
		if sel.Empty() || sel.Intersect(img) != sel {
			return framing{}, errcode.New(InputOutOfBounds, "region %v is not inside the %dx%d image", sel, f.W, f.H).
				With("image", img)
		}
		return framing{rect: f.toNativeRect(sel), scale: f.Scale, monitor: -1}, nil
	case a.Monitor != nil && *a.Monitor != -1:
		for _, m := range mons {
			if m.Index == *a.Monitor {
				return framing{rect: m.Bounds, scale: m.Scale, monitor: m.Index}, nil
			}
		}
		return framing{}, errcode.New(errcode.InvalidArgument, "no monitor %d; there are %d", *a.Monitor, len(mons))
	}
	fr := framing{scale: 1, monitor: -1}
	for _, m := range mons {
		fr.rect = fr.rect.Union(m.Bounds)
		fr.scale = max(fr.scale, m.Scale)
	}
	return fr, nil
}

// capture takes the observation for fr: state first (what drift is judged
// against), then pixels, windows and accessibility. It runs in the
// desktop's queue.
func (s *Service) capture(ctx context.Context, c *ops.Call, d *desk, fr framing, a desktopapi.ObserveArgs) (*desktopapi.Observation, error) {
	w, h := int(float64(fr.rect.W)*fr.scale), int(float64(fr.rect.H)*fr.scale)
	if w*h*4 > maxCaptureBytes {
		return nil, errcode.New(ops.ImageTooLarge, "a %dx%d capture exceeds the capture memory limit; observe one monitor or a region", w, h)
	}
	st, err := d.b.State(ctx)
	if err != nil {
		s.drop(d, err)
		return nil, nativeErr(err, "reading the desktop state")
	}
	if st.Locked {
		return nil, errcode.New(DesktopUnavailable, "the session is locked").With("reason", "session_locked")
	}
	img, err := d.b.Capture(ctx, fr.rect, fr.scale)
	if err != nil {
		return nil, nativeErr(err, "capturing the screen")
	}
	cw, ch := img.Rect.Dx(), img.Rect.Dy()
	if fr.maxEdge <= 0 {
		fr.maxEdge = desktopapi.DefaultMaxEdge
	}
	iw, ih := imageSize(cw, ch, fr.maxEdge)
	img = scaleImage(img, iw, ih)
	f := frame{Origin: fr.rect, Scale: fr.scale, W: img.Rect.Dx(), H: img.Rect.Dy()}
	obs := &desktopapi.Observation{Desktop: d.b.ID()}
	if cx, cy, err := d.b.Cursor(ctx); err == nil && fr.rect.Contains(cx, cy) {
		x, y := f.toImagePoint(cx, cy)
		obs.Cursor = &desktopapi.Point{X: x, Y: y}
		if a.Cursor {
			drawCursor(img, x, y)
		}
	}
	im, err := Encode(img, a.Format, a.Quality)
	if err != nil {
		return nil, errcode.As(err)
	}
	img = nil // the raw pixels are not needed past here
	obs.Images = []opsapi.Image{im}
	obs.Image = desktopapi.ImageInfo{MIMEType: im.MIMEType, Width: f.W, Height: f.H, Bytes: len(im.Data),
		Origin: [2]int{fr.rect.X, fr.rect.Y}, NativeSize: [2]int{fr.rect.W, fr.rect.H},
		Scale: float64(f.W) / float64(fr.rect.W), CaptureSize: [2]int{cw, ch}}
	c.AddBytes(int64(len(im.Data)))
	for _, m := range st.Monitors {
		obs.Monitors = append(obs.Monitors, desktopapi.MonitorInfo{Index: m.Index, Name: m.Name, Primary: m.Primary,
			Bounds: f.toImage(m.Bounds), Scale: m.Scale})
	}
	o := &observation{
		id: newID("obs_"), transport: c.Transport, desktop: d.b.ID(), frame: f,
		monitor: fr.monitor, maxEdge: fr.maxEdge, state: st, windows: make(map[string]native.Window), image: im,
	}
	status := d.b.Status(ctx)
	if status.Windows.Ready {
		if ws, err := d.b.Windows(ctx); err == nil {
			for _, nw := range ws {
				ref := newID("win_")
				o.windows[ref] = nw
				obs.Windows = append(obs.Windows, windowInfo(ref, nw, f.toImage(nw.Bounds)))
			}
		}
	}
	if a.Accessibility {
		obs.Accessibility = s.accessibility(ctx, d, status.Accessibility, f)
	}
	now := s.opts.now()
	o.expires = now.Add(s.opts.RefTTL)
	s.refs.add(o, now)
	obs.ObservationID = o.id
	c.Detail("observation_id", o.id) // the console pairs acts with what they acted on
	obs.ExpiresAt = o.expires.UTC().Format(time.RFC3339Nano)
	return obs, nil
}

func windowInfo(ref string, nw native.Window, box native.Rect) desktopapi.WindowInfo {
	return desktopapi.WindowInfo{Ref: ref, Title: nw.Title, App: nw.App, PID: nw.PID, Bounds: box,
		Focused: nw.Focused, Minimized: nw.Minimized, Elevated: nw.Elevated}
}

func (s *Service) accessibility(ctx context.Context, d *desk, r native.Readiness, f frame) *desktopapi.Accessibility {
	if !r.Ready {
		return &desktopapi.Accessibility{Reason: r.Reason}
	}
	max := s.opts.MaxAccessibilityBytes
	var text string
	var err error
	if t, ok := d.b.(native.AccessibilityTree); ok {
		var els []native.Element
		if els, err = t.AccessibilityTree(ctx, maxAccessibleNodes); err == nil {
			text = renderElements(els, f, max+1)
		}
	} else {
		text, err = d.b.Accessibility(ctx, max+1)
	}
	if err != nil {
		var ref *native.Refusal
		if errors.As(err, &ref) {
			return &desktopapi.Accessibility{Reason: ref.Reason}
		}
		return &desktopapi.Accessibility{Reason: "accessibility_failed"}
	}
	a := &desktopapi.Accessibility{Available: true, Text: text}
	if len(text) > max {
		n := max
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		a.Text, a.Truncated = text[:n], true
	}
	return a
}

// maxAccessibleNodes bounds one walk of an accessibility tree, as AT-SPI's
// walk is bounded.
const maxAccessibleNodes = 2000

// renderElements writes elements as indented "role: name @ x,y wxh" lines,
// the bounds in the image's coordinates, up to max bytes.
func renderElements(els []native.Element, f frame, max int) string {
	var sb strings.Builder
	for _, e := range els {
		line := strings.Repeat("  ", e.Depth) + e.Role
		if e.Name != "" {
			line += ": " + e.Name
		}
		if !e.Bounds.Empty() {
			b := f.toImage(e.Bounds)
			line += fmt.Sprintf(" @ %d,%d %dx%d", b.X, b.Y, b.W, b.H)
		}
		line += "\n"
		if sb.Len()+len(line) > max {
			sb.WriteString(line[:max-sb.Len()])
			break
		}
		sb.WriteString(line)
	}
	return sb.String()
}

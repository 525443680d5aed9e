//go:build linux

package wayland

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// Where the portal has no screen cast of a monitor but takes screenshots,
// frames are the Screenshot portal's: the whole desktop, one image, no
// input. The "session" is the person's permission for non-interactive
// screenshots (the portal asks once, or not at all for a host program,
// depending on its version) and the desktop's size at the first
// screenshot; a screenshot of another size means the desktop changed, as
// a resolution change closes a screen cast.

// maxShotBytes bounds the PNG file read back.
const maxShotBytes = 160 << 20

// coarseClock is how far a file's modification time may lag the clock:
// the kernel stamps files from its coarse clock, up to a tick (10 ms at
// HZ=100) behind.
const coarseClock = 20 * time.Millisecond

// openScreenshots takes the first screenshot, which may show the portal's
// permission dialog (bounded by ctx, the consent deadline), and makes the
// desktop it shows the session's one monitor.
func (b *Backend) openScreenshots(ctx context.Context) (*session, error) {
	s := &session{shot: true, monitor: native.Monitor{Name: "screenshot", Primary: true, Scale: 1}}
	img, err := b.shoot(ctx)
	if err != nil {
		return nil, err
	}
	s.monitor.Bounds = native.Rect{W: img.Rect.Dx(), H: img.Rect.Dy()}
	return s, nil
}

// screenshot is grab for a screenshot session, bounded like a capture.
func (b *Backend) screenshot(ctx context.Context, s *session) (*image.RGBA, error) {
	ctx, cancel := context.WithTimeout(ctx, captureTimeout)
	defer cancel()
	img, err := b.shoot(ctx)
	if err == context.DeadlineExceeded {
		return nil, native.Refuse(native.ErrUnavailable, ReasonCaptureTimeout, "the Screenshot portal did not answer within the capture deadline")
	}
	return img, err
}

// shoot asks the Screenshot portal for a non-interactive screenshot and
// reads the file it names. The file must have been written after the
// request started (the portal gives no timestamp; on some compositors the
// path is shared and reused), else the frame is not provably fresh. The
// file is hostlink's doing and is removed once read, so screenshots do
// not pile up in the person's pictures.
func (b *Backend) shoot(ctx context.Context) (*image.RGBA, error) {
	start := time.Now()
	res, err := b.portal.request(ctx, ifShot+".Screenshot", map[string]dbus.Variant{
		"interactive": dbus.MakeVariant(false),
	}, "")
	if err != nil {
		if err == errCancelled {
			return nil, native.Refuse(native.ErrPermission, ReasonDenied, "the person refused screenshots in the desktop's dialog")
		}
		return nil, err
	}
	uri, _ := res["uri"].Value().(string)
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return nil, fmt.Errorf("the Screenshot portal answered %q, not a file", uri)
	}
	f, err := os.Open(u.Path)
	if err != nil {
		return nil, fmt.Errorf("the Screenshot portal's file: %w", err)
	}
	defer os.Remove(u.Path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.ModTime().Before(start.Add(-coarseClock)) {
		return nil, native.Refuse(native.ErrUnavailable, ReasonFreshFrame,
			"the Screenshot portal's file is older than the request: not a fresh frame")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxShotBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxShotBytes {
		return nil, fmt.Errorf("the screenshot is over %d bytes", maxShotBytes)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decoding the screenshot: %w", err)
	}
	rgba := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	draw.Draw(rgba, rgba.Rect, img, img.Bounds().Min, draw.Src)
	return rgba, nil
}

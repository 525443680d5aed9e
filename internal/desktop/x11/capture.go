package x11

import (
	"context"
	"fmt"
	"image"

	"github.com/jezek/xgb/xproto"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// stripBytes bounds one GetImage reply, so a large screen is read in
// horizontal strips rather than one reply of tens of megabytes.
const stripBytes = 4 << 20

// Capture reads r from the root window with GetImage (ZPixmap). Only
// TrueColor screens with 32 bits per pixel (depth 24 or 32), the format of
// every current X server, are supported; others fail explicitly. X11
// monitors all have scale 1.
func (b *Backend) Capture(ctx context.Context, r native.Rect, scale float64) (*image.RGBA, error) {
	if scale != 1 {
		return nil, fmt.Errorf("%w: scale %g on X11", native.ErrNotSupported, scale)
	}
	screen := native.Rect{W: int(b.screen.WidthInPixels), H: int(b.screen.HeightInPixels)}
	img := image.NewRGBA(image.Rect(0, 0, r.W, r.H))
	// The alpha channel is opaque everywhere, including outside the screen.
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 0xff
	}
	in := r.Intersect(screen)
	if in.Empty() {
		return img, nil
	}
	bpp, err := b.bitsPerPixel(b.screen.RootDepth)
	if err != nil {
		return nil, err
	}
	if bpp != 32 {
		return nil, fmt.Errorf("%w: %d bits per pixel", native.ErrNotSupported, bpp)
	}
	bgr := b.setup.ImageByteOrder == xproto.ImageOrderLSBFirst
	rows := max(1, stripBytes/(in.W*4))
	for y := in.Y; y < in.Y+in.H; y += rows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := min(rows, in.Y+in.H-y)
		rep, err := xproto.GetImage(b.conn, xproto.ImageFormatZPixmap, xproto.Drawable(b.root),
			int16(in.X), int16(y), uint16(in.W), uint16(h), 0xffffffff).Reply()
		if err != nil {
			return nil, fmt.Errorf("x11 GetImage: %w", err)
		}
		if len(rep.Data) < in.W*h*4 {
			return nil, fmt.Errorf("x11 GetImage: short reply (%d bytes for %dx%d)", len(rep.Data), in.W, h)
		}
		for row := 0; row < h; row++ {
			src := rep.Data[row*in.W*4 : (row+1)*in.W*4]
			off := img.PixOffset(in.X-r.X, y+row-r.Y)
			dst := img.Pix[off : off+in.W*4]
			for i := 0; i < len(src); i += 4 {
				if bgr {
					dst[i], dst[i+1], dst[i+2] = src[i+2], src[i+1], src[i]
				} else {
					dst[i], dst[i+1], dst[i+2] = src[i+1], src[i+2], src[i+3]
				}
			}
		}
	}
	return img, nil
}

func (b *Backend) bitsPerPixel(depth byte) (int, error) {
	for _, f := range b.setup.PixmapFormats {
		if f.Depth == depth {
			return int(f.BitsPerPixel), nil
		}
	}
	return 0, fmt.Errorf("%w: no pixmap format for depth %d", native.ErrNotSupported, depth)
}

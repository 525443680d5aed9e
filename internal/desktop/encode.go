package desktop

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// pngEncoder trades size for speed: screenshots are large and encoding is
// most of an observation's latency.
var pngEncoder = png.Encoder{CompressionLevel: png.BestSpeed}

// Encode returns img as PNG ("png" or "") or JPEG ("jpeg", quality 1-100,
// 0 for 80), refusing an image over the per-image limit.
func Encode(img *image.RGBA, format string, quality int) (ops.Image, error) {
	var buf bytes.Buffer
	buf.Grow(len(img.Pix) / 4)
	mime := "image/png"
	var err error
	if format == "jpeg" {
		mime = "image/jpeg"
		if quality <= 0 {
			quality = 80
		}
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: min(quality, 100)})
	} else {
		// A capture is opaque, so the encoder writes RGB without alpha.
		err = pngEncoder.Encode(&buf, img)
	}
	if err != nil {
		return ops.Image{}, err
	}
	if buf.Len() > ops.MaxImageBytes {
		return ops.Image{}, errcode.New(ops.ImageTooLarge,
			"the %dx%d image encodes to %d bytes, over %d; observe one monitor, a region, or format jpeg",
			img.Rect.Dx(), img.Rect.Dy(), buf.Len(), ops.MaxImageBytes)
	}
	return ops.Image{MIMEType: mime, Data: buf.Bytes()}, nil
}

// drawCursor marks the pointer at (x, y) with a small black-and-white
// cross, visible on any background.
func drawCursor(img *image.RGBA, x, y int) {
	const arm = 8
	for d := -arm; d <= arm; d++ {
		for w := -1; w <= 1; w++ {
			c := color.RGBA{0, 0, 0, 255}
			if w == 0 {
				c = color.RGBA{255, 255, 255, 255}
			}
			img.SetRGBA(x+d, y+w, c)
			img.SetRGBA(x+w, y+d, c)
		}
	}
}

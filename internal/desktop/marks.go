package desktop

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"

	"github.com/hostlink/hostlink/internal/approvalsapi"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktopapi"
)

// keepPixels is how many of the newest observations keep their encoded
// image, for an approval to show the act on it; older ones keep none, so
// that the references (up to maxRefs) hold a few images at most.
const keepPixels = 4

// ActImage returns the image of the observation an act refers to, with
// marks drawn on it, as PNG; ok is false when that observation's image is
// no longer kept (or it is not this transport's).
func (s *Service) ActImage(transport audit.Transport, observationID string, marks []approvalsapi.Mark) (pngData []byte, w, h int, ok bool) {
	s.refs.mu.Lock()
	o := s.refs.m[observationID]
	var im []byte
	var mime string
	if o != nil && o.transport == transport {
		im, mime = o.image.Data, o.image.MIMEType
	}
	s.refs.mu.Unlock()
	if len(im) == 0 {
		return nil, 0, 0, false
	}
	var src image.Image
	var err error
	if mime == "image/jpeg" {
		src, err = jpeg.Decode(bytes.NewReader(im))
	} else {
		src, err = png.Decode(bytes.NewReader(im))
	}
	if err != nil {
		return nil, 0, 0, false
	}
	img := image.NewRGBA(src.Bounds())
	draw.Draw(img, img.Bounds(), src, src.Bounds().Min, draw.Src)
	for _, m := range marks {
		drawMark(img, m)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, 0, 0, false
	}
	return buf.Bytes(), img.Bounds().Dx(), img.Bounds().Dy(), true
}

// markColor is what marks are drawn in: opaque magenta, rare on screens.
var markColor = color.RGBA{R: 255, G: 0, B: 200, A: 255}

// drawMark draws one mark: a ring with a cross for a point, the path for
// a drag (a ring at its end), an arrow's shaft for a scroll.
func drawMark(img *image.RGBA, m approvalsapi.Mark) {
	if len(m.Points) == 0 {
		return
	}
	for i := 1; i < len(m.Points); i++ {
		line(img, m.Points[i-1], m.Points[i])
	}
	p := m.Points[0]
	if m.Kind == "drag" {
		p = m.Points[len(m.Points)-1]
	}
	ring(img, p, 12)
	line(img, [2]int{p[0] - 6, p[1]}, [2]int{p[0] + 6, p[1]})
	line(img, [2]int{p[0], p[1] - 6}, [2]int{p[0], p[1] + 6})
}

// line draws a 3-pixel-wide segment (Bresenham).
func line(img *image.RGBA, a, b [2]int) {
	x0, y0, x1, y1 := a[0], a[1], b[0], b[1]
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		dot(img, x0, y0)
		if x0 == x1 && y0 == y1 {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e += dy
			x0 += sx
		} else {
			e += dx
			y0 += sy
		}
	}
}

// ring draws a circle of radius r around p (midpoint algorithm).
func ring(img *image.RGBA, p [2]int, r int) {
	x, y, d := r, 0, 1-r
	for x >= y {
		for _, q := range [][2]int{{x, y}, {y, x}, {-y, x}, {-x, y}, {-x, -y}, {-y, -x}, {y, -x}, {x, -y}} {
			dot(img, p[0]+q[0], p[1]+q[1])
		}
		y++
		if d < 0 {
			d += 2*y + 1
		} else {
			x--
			d += 2*(y-x) + 1
		}
	}
}

func dot(img *image.RGBA, x, y int) {
	for i := -1; i <= 1; i++ {
		for j := -1; j <= 1; j++ {
			if (image.Point{X: x + i, Y: y + j}).In(img.Rect) {
				img.SetRGBA(x+i, y+j, markColor)
			}
		}
	}
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// actMarks are what an act does, as points of its observation's image.
func actMarks(a desktopapi.ActArgs) []approvalsapi.Mark {
	switch {
	case a.Action == "drag" && len(a.Path) > 0:
		return []approvalsapi.Mark{{Kind: "drag", Points: a.Path}}
	case a.X == nil || a.Y == nil:
		return nil
	case a.Action == "scroll":
		// The shaft points where the content moves into view: 120 wheel
		// units a notch, a notch drawn as 10 pixels.
		p := [2]int{*a.X, *a.Y}
		return []approvalsapi.Mark{{Kind: "scroll", Points: [][2]int{p, {p[0] + a.DX/12, p[1] + a.DY/12}}}}
	}
	return []approvalsapi.Mark{{Kind: a.Action, Points: [][2]int{{*a.X, *a.Y}}}}
}

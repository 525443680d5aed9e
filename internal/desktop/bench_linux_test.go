package desktop

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/x11"
	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/ops"
)

// busyScreen starts a 1920x1080 Xvfb with terminals full of text, so the
// image is not trivially compressible.
func busyScreen(b *testing.B) *xvfbtest.Display {
	d := xvfbtest.Start(b, 1920, 1080)
	for i, geo := range []string{"120x40+0+0", "120x40+960+0", "120x40+0+540", "120x40+960+540"} {
		d.Background("xterm", "-geometry", geo, "-bg", []string{"white", "navy", "black", "darkgreen"}[i],
			"-fg", []string{"black", "white", "green", "yellow"}[i], "-e", "sh", "-c", "ls -l /usr/bin /usr/lib; sleep 600")
	}
	d.Eventually("four terminals", func() bool {
		out, _ := d.Output("xdotool", "search", "--class", "XTerm")
		return len(strings.Fields(out)) >= 4
	})
	time.Sleep(time.Second) // let them draw
	return d
}

// BenchmarkObserve1080p is computer_observe end to end on a 1920x1080
// screen: state, GetImage, PNG encoding, windows, reference.
func BenchmarkObserve1080p(b *testing.B) {
	d := busyScreen(b)
	s := New(Options{Open: openX11(d.Name, nil)})
	defer s.Close()
	ctx := context.Background()
	var size int
	b.ResetTimer()
	for b.Loop() {
		obs, err := s.observe(ctx, &ops.Call{}, desktopapi.ObserveArgs{})
		if err != nil {
			b.Fatal(err)
		}
		size = len(obs.Images[0].Data)
	}
	b.ReportMetric(float64(size), "png-bytes")
}

// BenchmarkCapture1080p is the GetImage part alone.
func BenchmarkCapture1080p(b *testing.B) {
	d := busyScreen(b)
	bk, err := x11.Open(d.Name)
	if err != nil {
		b.Fatal(err)
	}
	defer bk.Close()
	ctx := context.Background()
	for b.Loop() {
		if _, err := bk.Capture(ctx, native.Rect{W: 1920, H: 1080}, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkXWDConvert1080p is the independent route for the same screen:
// xwd piped through netpbm (xwdtopnm | pnmtopng), as a shell would do it.
func BenchmarkXWDConvert1080p(b *testing.B) {
	d := busyScreen(b)
	xvfbtest.Need(b, "pnmtopng")
	var size int
	for b.Loop() {
		cmd := exec.Command("sh", "-c", "xwd -root -silent | xwdtopnm 2>/dev/null | pnmtopng 2>/dev/null")
		cmd.Env = d.Env()
		out, err := cmd.Output()
		if err != nil || len(out) == 0 {
			b.Fatalf("%v (%d bytes)", err, len(out))
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "png-bytes")
}

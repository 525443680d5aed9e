package console_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"testing"

	"github.com/hostlink/hostlink/internal/console"
	"github.com/hostlink/hostlink/internal/ops"
)

type observation struct {
	ObservationID string `json:"observation_id"`
	img           []ops.Image
}

func (o observation) ResultImages() []ops.Image { return o.img }

func pngOf(t *testing.T, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestThumbs: an observation's image is kept scaled to 320 pixels wide
// (a smaller one as it is); other operations' results are not kept; the
// 64 latest are kept, the oldest go first.
func TestThumbs(t *testing.T) {
	th := console.NewThumbs()
	big := []ops.Image{{MIMEType: "image/png", Data: pngOf(t, 1280, 800)}}
	th.Keep(ops.Caller{}, "computer_observe", observation{"obs_big", big})
	th.Keep(ops.Caller{}, "read_file", observation{"obs_other", big})
	th.Keep(ops.Caller{}, "computer_observe", observation{"obs_small", []ops.Image{{MIMEType: "image/png", Data: pngOf(t, 100, 50)}}})
	for id, want := range map[string]image.Point{"obs_big": {320, 200}, "obs_small": {100, 50}} {
		b, ok := th.Get(id)
		if !ok {
			t.Fatalf("no thumbnail of %s", id)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil || cfg.Width != want.X || cfg.Height != want.Y {
			t.Errorf("%s: %dx%d %v, want %v", id, cfg.Width, cfg.Height, err, want)
		}
	}
	if _, ok := th.Get("obs_other"); ok {
		t.Error("a read_file result was kept")
	}
	small := []ops.Image{{MIMEType: "image/png", Data: pngOf(t, 8, 8)}}
	for i := range 63 { // with obs_big and obs_small: 65
		th.Keep(ops.Caller{}, "computer_observe", observation{fmt.Sprint("obs_", i), small})
	}
	if _, ok := th.Get("obs_big"); ok {
		t.Error("the 65th newest is still kept")
	}
	for _, id := range []string{"obs_small", "obs_0", "obs_62"} {
		if _, ok := th.Get(id); !ok {
			t.Errorf("%s (among the 64 newest) is gone", id)
		}
	}
}

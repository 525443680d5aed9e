package console

import (
	"bytes"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"sync"

	"golang.org/x/image/draw"

	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/ops"
)

// Thumbnail bounds: the width of a thumbnail, and how many are kept (the
// oldest go first).
const (
	thumbWidth = 320
	maxThumbs  = 64
)

// Thumbs keeps small copies of the latest desktop observations, by
// observation id, for the console's desktop page: the observation itself
// belongs to the call that made it and is not kept. Thumbnails live in
// memory only and are shown only to a logged-in console.
type Thumbs struct {
	mu    sync.Mutex
	png   map[string][]byte
	order []string
}

// NewThumbs returns an empty store.
func NewThumbs() *Thumbs { return &Thumbs{png: map[string][]byte{}} }

// Keep is an ops.Options.Results hook: it keeps a thumbnail of the
// observation a computer_observe or computer_act result carries.
func (t *Thumbs) Keep(_ ops.Caller, op string, out any) {
	if op != desktopapi.OpObserve && op != desktopapi.OpAct {
		return
	}
	imgs := ops.ImagesOf(out)
	if len(imgs) == 0 {
		return
	}
	var ids struct {
		ObservationID string `json:"observation_id"`
		Observation   *struct {
			ObservationID string `json:"observation_id"`
		} `json:"observation"`
	}
	b, _ := json.Marshal(out)
	json.Unmarshal(b, &ids)
	id := ids.ObservationID
	if ids.Observation != nil {
		id = ids.Observation.ObservationID
	}
	if id == "" {
		return
	}
	thumb, err := thumbnail(imgs[0])
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.png[id]; !ok {
		t.order = append(t.order, id)
	}
	t.png[id] = thumb
	for len(t.order) > maxThumbs {
		delete(t.png, t.order[0])
		t.order = t.order[1:]
	}
}

// Get returns the PNG thumbnail of observation id.
func (t *Thumbs) Get(id string) ([]byte, bool) {
	if t == nil {
		return nil, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b, ok := t.png[id]
	return b, ok
}

// thumbnail scales an observation image to thumbWidth pixels wide (never
// up) as PNG.
func thumbnail(im ops.Image) ([]byte, error) {
	var src image.Image
	var err error
	switch im.MIMEType {
	case "image/jpeg":
		src, err = jpeg.Decode(bytes.NewReader(im.Data))
	default:
		src, err = png.Decode(bytes.NewReader(im.Data))
	}
	if err != nil {
		return nil, err
	}
	r := src.Bounds()
	w, h := r.Dx(), r.Dy()
	if w > thumbWidth {
		w, h = thumbWidth, max(1, h*thumbWidth/w)
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, r, draw.Src, nil)
	var out bytes.Buffer
	if err := png.Encode(&out, dst); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

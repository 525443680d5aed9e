//go:build linux

package wayland

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

func TestParseSerial(t *testing.T) {
	dump := []byte(`[
  {"id": 37, "type": "PipeWire:Interface:Node", "info": {"props": {"object.serial": 112, "node.name": "gnome-shell-screencast"}}},
  {"id": 38, "type": "PipeWire:Interface:Port", "info": {"props": {"object.serial": 113}}}
]`)
	tests := []struct {
		node uint32
		want uint64
		ok   bool
	}{
		{37, 112, true},
		{38, 0, false}, // a port, not a node
		{39, 0, false},
	}
	for _, tt := range tests {
		got, err := parseSerial(dump, tt.node)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("parseSerial(%d) = %d, %v", tt.node, got, err)
		}
	}
	if _, err := parseSerial([]byte("not json"), 37); err == nil {
		t.Error("garbage parsed")
	}
}

// TestFresh: a frame is accepted only with a logged timestamp later than
// the capture's start; the first dequeued buffer counts, even when the
// log arrives in pieces.
func TestFresh(t *testing.T) {
	line := func(pts int64) string {
		return fmt.Sprintf("0:00:00.1 1 0x5 LOG pipewiresrc gstpipewiresrc.c:634:dequeue_buffer:<pipewiresrc0> dequeue buffer pts %d\n", pts)
	}
	tests := []struct {
		name  string
		log   string
		start int64
		ok    bool
	}{
		{"newer", line(2000), 1000, true},
		{"older", line(900), 1000, false},
		{"equal", line(1000), 1000, false},
		{"first counts", line(900) + line(2000), 1000, false},
		{"no timestamp", "0:00:00.1 1 0x5 DEBUG pipewiresrc something else\n", 1000, false},
		{"empty", "", 1000, false},
	}
	for _, tt := range tests {
		l := &ptsLog{}
		for i := 0; i < len(tt.log); i += 7 { // in pieces
			l.Write([]byte(tt.log[i:min(i+7, len(tt.log))]))
		}
		err := fresh(l, tt.start)
		var r *native.Refusal
		if tt.ok != (err == nil) || (err != nil && (!errors.As(err, &r) || r.Reason != ReasonFreshFrame)) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

func TestCrop(t *testing.T) {
	frame := image.NewRGBA(image.Rect(0, 0, 100, 50))
	for y := 0; y < 50; y++ {
		for x := 0; x < 100; x++ {
			frame.SetRGBA(x, y, color.RGBA{uint8(x), uint8(y), 7, 255})
		}
	}
	mon := native.Rect{X: 200, Y: 0, W: 100, H: 50}
	img, err := crop(frame, mon, native.Rect{X: 210, Y: 5, W: 20, H: 10}, 1)
	if err != nil || img.Rect.Dx() != 20 || img.RGBAAt(0, 0) != (color.RGBA{10, 5, 7, 255}) {
		t.Fatalf("inside: %v %v", img.Rect, err)
	}
	// Partly left of the monitor: that part is opaque black.
	img, err = crop(frame, mon, native.Rect{X: 190, Y: 0, W: 20, H: 10}, 1)
	if err != nil || img.RGBAAt(0, 0) != (color.RGBA{0, 0, 0, 255}) || img.RGBAAt(10, 0) != (color.RGBA{0, 0, 7, 255}) {
		t.Fatalf("outside: %v %v %v", img.RGBAAt(0, 0), img.RGBAAt(10, 0), err)
	}
	// A frame of another size than the session's monitor: the monitor
	// changed, which closes the session.
	var r *native.Refusal
	if _, err := crop(frame, native.Rect{W: 80, H: 50}, native.Rect{W: 10, H: 10}, 1); !errors.As(err, &r) || !errors.Is(err, native.ErrSessionClosed) {
		t.Fatalf("resized: %v", err)
	}
}

func TestPlanSteps(t *testing.T) {
	b := &Backend{}
	s := &session{node: 44, monitor: native.Monitor{Bounds: native.Rect{X: 100, Y: 0, W: 800, H: 600}}}
	tests := []struct {
		step  native.Step
		calls int
		err   error
	}{
		{native.Step{Kind: native.Move, X: 150, Y: 20}, 1, nil},
		{native.Step{Kind: native.Move, X: 50, Y: 20}, 0, native.ErrNotSupported},
		{native.Step{Kind: native.ButtonDown, Button: native.Right}, 1, nil},
		{native.Step{Kind: native.Wheel, DY: 240, DX: -120}, 2, nil},
		{native.Step{Kind: native.Wheel, DY: 60}, 0, native.ErrNotSupported},
		{native.Step{Kind: native.KeyDown, Key: "enter"}, 1, nil},
		{native.Step{Kind: native.KeyDown, Key: "hyperdrive"}, 0, native.ErrUnmappedKey},
		{native.Step{Kind: native.Text, Text: "a€\n"}, 6, nil},
		{native.Step{Kind: native.Text, Text: "\x01"}, 0, native.ErrUnmappedKey},
	}
	for _, tt := range tests {
		calls, err := b.plan(s, tt.step)
		if len(calls) != tt.calls || !errors.Is(err, tt.err) {
			t.Errorf("plan(%+v) = %d calls, %v", tt.step, len(calls), err)
		}
	}
	calls, _ := b.plan(s, native.Step{Kind: native.Move, X: 150, Y: 20})
	if a := calls[0].args; a[0] != uint32(44) || a[1] != 50.0 || a[2] != 20.0 {
		t.Errorf("motion is stream-relative: %v", a)
	}
	calls, _ = b.plan(s, native.Step{Kind: native.Wheel, DY: 240})
	if a := calls[0].args; a[0] != uint32(axisVertical) || a[1] != int32(2) {
		t.Errorf("two notches down: %v", a)
	}
}

// TestRawFrame: GStreamer's RGBA bytes become the monitor's image at the
// session's scale, or at the scale the byte count implies for the first
// frame; any other size closes the session.
func TestRawFrame(t *testing.T) {
	mon := native.Rect{W: 4, H: 2}
	tests := []struct {
		name   string
		bytes  int
		scale  float64
		w      int
		closed bool
	}{
		{"scale 1", 4 * 2 * 4, 1, 4, false},
		{"first frame, scale 2", 8 * 4 * 4, 0, 8, false},
		{"first frame, scale 1.5", 6 * 3 * 4, 0, 6, false},
		{"resized", 5 * 2 * 4, 1, 0, true},
		{"first frame of another aspect", 4 * 4 * 4, 0, 0, true},
		{"empty", 0, 0, 0, true},
	}
	for _, tt := range tests {
		img, err := rawFrame(make([]byte, tt.bytes), mon, tt.scale)
		if tt.closed {
			if !errors.Is(err, native.ErrSessionClosed) {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if err != nil || img.Rect.Dx() != tt.w || img.Pix[3] != 0xff {
			t.Errorf("%s: %v %v", tt.name, img, err)
		}
	}
}

func TestLostBy(t *testing.T) {
	const node, serial = 37, 120
	tests := []struct {
		name   string
		update string
		lost   bool
	}{
		{"other objects change", `[{"id": 36, "info": null}, {"id": 38, "type": "PipeWire:Interface:Node", "info": {"props": {"object.serial": 7}}}]`, false},
		{"the node's state changes", `[{"id": 37, "type": "PipeWire:Interface:Node", "info": {"state": "running", "props": {"object.serial": 120}}}]`, false},
		{"an update without props", `[{"id": 37, "type": "PipeWire:Interface:Node", "info": {"state": "idle"}}]`, false},
		{"the node removed", `[{"id": 37, "info": null}]`, true},
		{"the id reused by another node", `[{"id": 37, "type": "PipeWire:Interface:Node", "info": {"props": {"object.serial": 133}}}]`, true},
		{"the id reused by a port", `[{"id": 37, "type": "PipeWire:Interface:Port", "info": {"props": {"object.serial": 134}}}]`, true},
		{"the whole graph, node present", `[{"id": 0, "type": "PipeWire:Interface:Core", "info": {}}, {"id": 37, "type": "PipeWire:Interface:Node", "info": {"props": {"object.serial": 120}}}]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []pwObject
			if err := json.Unmarshal([]byte(tt.update), &objs); err != nil {
				t.Fatal(err)
			}
			why, lost := lostBy(objs, node, serial)
			if lost != tt.lost || lost == (why == "") {
				t.Fatalf("lostBy = %q, %v; want lost %v", why, lost, tt.lost)
			}
		})
	}
}

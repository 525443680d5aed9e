package desktop

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// retina is an observation of a 2x monitor at (1000, 0) in points, seen
// as a 400x300 region starting at native (1100, 50).
func retina() *observation {
	return &observation{
		frame: frame{Origin: native.Rect{X: 1100, Y: 50, W: 200, H: 150}, Scale: 2, W: 400, H: 300},
		state: native.State{Monitors: []native.Monitor{
			{Index: 0, Bounds: native.Rect{W: 1000, H: 800}, Scale: 1},
			{Index: 1, Bounds: native.Rect{X: 1000, W: 250, H: 180}, Scale: 2},
		}},
		windows: map[string]native.Window{"win_a": {Handle: 7, Title: "a"}},
	}
}

func ip(v int) *int { return &v }

func TestPlan(t *testing.T) {
	o := retina()
	tests := []struct {
		name  string
		args  desktopapi.ActArgs
		steps []native.Step
		code  errcode.Code
	}{
		{"click maps image to points", desktopapi.ActArgs{Action: "click", X: ip(10), Y: ip(20)}, []native.Step{
			{Kind: native.Move, X: 1105, Y: 60},
			{Kind: native.ButtonDown, Button: native.Left}, {Kind: native.ButtonUp, Button: native.Left},
		}, ""},
		{"double right click with shift", desktopapi.ActArgs{Action: "click", X: ip(0), Y: ip(0), Button: "right", Count: 2, Modifiers: []string{"Shift"}}, []native.Step{
			{Kind: native.KeyDown, Key: "shift"},
			{Kind: native.Move, X: 1100, Y: 50},
			{Kind: native.ButtonDown, Button: native.Right}, {Kind: native.ButtonUp, Button: native.Right},
			{Kind: native.ButtonDown, Button: native.Right}, {Kind: native.ButtonUp, Button: native.Right},
			{Kind: native.KeyUp, Key: "shift"},
		}, ""},
		{"drag along a path", desktopapi.ActArgs{Action: "drag", Path: [][2]int{{0, 0}, {20, 20}, {40, 0}}}, []native.Step{
			{Kind: native.Move, X: 1100, Y: 50}, {Kind: native.ButtonDown, Button: native.Left},
			{Kind: native.Move, X: 1110, Y: 60}, {Kind: native.Move, X: 1120, Y: 50},
			{Kind: native.ButtonUp, Button: native.Left},
		}, ""},
		{"scroll in place", desktopapi.ActArgs{Action: "scroll", DY: -240}, []native.Step{{Kind: native.Wheel, DY: -240}}, ""},
		{"chord", desktopapi.ActArgs{Action: "key", Keys: "Ctrl+Shift+t"}, []native.Step{
			{Kind: native.KeyDown, Key: "ctrl"}, {Kind: native.KeyDown, Key: "shift"}, {Kind: native.KeyDown, Key: "t"},
			{Kind: native.KeyUp, Key: "t"}, {Kind: native.KeyUp, Key: "shift"}, {Kind: native.KeyUp, Key: "ctrl"},
		}, ""},
		{"literal plus", desktopapi.ActArgs{Action: "key", Keys: "ctrl++"}, []native.Step{
			{Kind: native.KeyDown, Key: "ctrl"}, {Kind: native.KeyDown, Key: "+"},
			{Kind: native.KeyUp, Key: "+"}, {Kind: native.KeyUp, Key: "ctrl"},
		}, ""},
		{"type", desktopapi.ActArgs{Action: "type", Text: "héllo\n"}, []native.Step{{Kind: native.Text, Text: "héllo\n"}}, ""},
		{"outside the image", desktopapi.ActArgs{Action: "move", X: ip(400), Y: ip(0)}, nil, InputOutOfBounds},
		{"negative", desktopapi.ActArgs{Action: "move", X: ip(-1), Y: ip(0)}, nil, InputOutOfBounds},
		{"inside the image, off every monitor", desktopapi.ActArgs{Action: "move", X: ip(399), Y: ip(299)}, nil, InputOutOfBounds},
		{"no coordinates", desktopapi.ActArgs{Action: "click"}, nil, errcode.InvalidArgument},
		{"four clicks", desktopapi.ActArgs{Action: "click", X: ip(1), Y: ip(1), Count: 4}, nil, errcode.InvalidArgument},
		{"unknown key", desktopapi.ActArgs{Action: "key", Keys: "ctrl+warp"}, nil, KeyUnmapped},
		{"empty chord part", desktopapi.ActArgs{Action: "key", Keys: "ctrl+"}, nil, KeyUnmapped},
		{"bad modifier", desktopapi.ActArgs{Action: "click", X: ip(1), Y: ip(1), Modifiers: []string{"enter"}}, nil, errcode.InvalidArgument},
		{"empty scroll", desktopapi.ActArgs{Action: "scroll"}, nil, errcode.InvalidArgument},
		{"short drag", desktopapi.ActArgs{Action: "drag", Path: [][2]int{{1, 1}}}, nil, errcode.InvalidArgument},
		{"invalid UTF-8", desktopapi.ActArgs{Action: "type", Text: "\xff"}, nil, errcode.InvalidArgument},
		{"unknown window", desktopapi.ActArgs{Action: "focus", WindowRef: "win_b"}, nil, WindowStale},
	}
	for _, tt := range tests {
		steps, _, err := plan(tt.args, o)
		if code := errcode.CodeOf(err); code != tt.code {
			t.Errorf("%s: code %q (%v), want %q", tt.name, code, err, tt.code)
			continue
		}
		if tt.code != "" {
			continue
		}
		if len(steps) != len(tt.steps) {
			t.Errorf("%s: steps %+v, want %+v", tt.name, steps, tt.steps)
			continue
		}
		for i := range steps {
			if steps[i] != tt.steps[i] {
				t.Errorf("%s: step %d = %+v, want %+v", tt.name, i, steps[i], tt.steps[i])
			}
		}
	}
	_, w, err := plan(desktopapi.ActArgs{Action: "focus", WindowRef: "win_a"}, o)
	if err != nil || w.Handle != 7 {
		t.Fatalf("focus: %+v %v", w, err)
	}
}

func TestOutOfBoundsEchoesValidRects(t *testing.T) {
	_, _, err := plan(desktopapi.ActArgs{Action: "move", X: ip(399), Y: ip(299)}, retina())
	rects, ok := errcode.As(err).Details["displays"].([]native.Rect)
	// Monitor 1 in image coordinates: native (1000..1250, 0..180) is
	// image (-200..300, -100..260), clipped to the image.
	if !ok || len(rects) != 1 || rects[0] != (native.Rect{X: 0, Y: 0, W: 300, H: 260}) {
		t.Fatalf("displays %v (%v)", errcode.As(err).Details, err)
	}
}

func TestFrame(t *testing.T) {
	f := retina().frame
	if x, y := f.toNative(399, 299); x != 1299 || y != 199 {
		t.Errorf("toNative = %d,%d", x, y)
	}
	if r := f.toImage(native.Rect{X: 1100, Y: 50, W: 10, H: 5}); r != (native.Rect{W: 20, H: 10}) {
		t.Errorf("toImage = %+v", r)
	}
}

func TestRefStore(t *testing.T) {
	s := newRefStore()
	now := time.Unix(1000, 0)
	add := func(id string) {
		s.add(&observation{id: id, transport: "mcp", expires: now.Add(MaxRefTTL)}, now)
	}
	add("a")
	if _, err := s.get("a", "link", now); errcode.CodeOf(err) != ObservationUnknown {
		t.Fatalf("another transport: %v", err)
	}
	if _, err := s.consume("a", "mcp", now.Add(MaxRefTTL-time.Nanosecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.consume("a", "mcp", now); errcode.CodeOf(err) != ObservationConsumed {
		t.Fatalf("consumed twice: %v", err)
	}
	add("b")
	if _, err := s.get("b", "mcp", now.Add(MaxRefTTL)); errcode.CodeOf(err) != ObservationExpired {
		t.Fatalf("at expiry: %v", err)
	}
	// An unknown id is quoted back clipped at a character boundary: byte
	// 40 is inside the 20th "é".
	_, err := s.get("o"+strings.Repeat("é", 30), "mcp", now)
	if msg := errcode.As(err).Message; !utf8.ValidString(msg) || !strings.Contains(msg, `"o`+strings.Repeat("é", 19)+`…"`) {
		t.Fatalf("unknown id quoted as %q", msg)
	}
	// Past maxRefs, the oldest reference goes.
	for i := range maxRefs + 5 {
		add(fmt.Sprintf("n%d", i))
	}
	if len(s.m) != maxRefs {
		t.Fatalf("%d references kept", len(s.m))
	}
	if _, err := s.get("b", "mcp", now); errcode.CodeOf(err) != ObservationUnknown {
		t.Fatalf("oldest not evicted: %v", err)
	}
	// Long-expired references are swept on the next add.
	s.add(&observation{id: "late", transport: "mcp", expires: now.Add(3 * MaxRefTTL)}, now.Add(2*MaxRefTTL+time.Second))
	if len(s.m) != 1 {
		t.Fatalf("%d references after the sweep", len(s.m))
	}
}

func TestOperationsReadiness(t *testing.T) {
	no := native.Readiness{Reason: "permission_pending"}
	ok := native.Readiness{Ready: true}
	ops := operations(native.Status{Capture: no, Input: ok, Windows: ok})
	if ops["computer_observe"].Ready || ops["computer_act"].Reason != "permission_pending" || !ops["focus"].Ready {
		t.Fatalf("%+v", ops)
	}
}

package desktop

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// plan turns an act into native input steps (or, for focus, the window to
// focus), checking every coordinate against the observation's image and
// monitors. It dispatches nothing.
func plan(a desktopapi.ActArgs, o *observation) ([]native.Step, native.Window, error) {
	invalid := func(format string, args ...any) ([]native.Step, native.Window, error) {
		return nil, native.Window{}, errcode.New(errcode.InvalidArgument, format, args...)
	}
	mods, err := modifiers(a.Modifiers)
	if err != nil {
		return nil, native.Window{}, err
	}
	point := func() (native.Step, error) {
		if a.X == nil || a.Y == nil {
			return native.Step{}, errcode.New(errcode.InvalidArgument, "%s needs x and y", a.Action)
		}
		return o.at(*a.X, *a.Y)
	}
	switch a.Action {
	case "click":
		p, err := point()
		if err != nil {
			return nil, native.Window{}, err
		}
		count := a.Count
		if count == 0 {
			count = 1
		}
		if count < 1 || count > 3 {
			return invalid("count must be 1-3")
		}
		b, err := button(a.Button)
		if err != nil {
			return nil, native.Window{}, err
		}
		steps := []native.Step{p}
		for range count {
			steps = append(steps, native.Step{Kind: native.ButtonDown, Button: b}, native.Step{Kind: native.ButtonUp, Button: b})
		}
		return hold(mods, steps), native.Window{}, nil
	case "move":
		p, err := point()
		return []native.Step{p}, native.Window{}, err
	case "drag":
		if len(a.Path) < 2 || len(a.Path) > 1000 {
			return invalid("drag needs a path of 2 to 1000 points")
		}
		b, err := button(a.Button)
		if err != nil {
			return nil, native.Window{}, err
		}
		var steps []native.Step
		for i, pt := range a.Path {
			p, err := o.at(pt[0], pt[1])
			if err != nil {
				return nil, native.Window{}, err
			}
			steps = append(steps, p)
			if i == 0 {
				steps = append(steps, native.Step{Kind: native.ButtonDown, Button: b})
			}
		}
		steps = append(steps, native.Step{Kind: native.ButtonUp, Button: b})
		return hold(mods, steps), native.Window{}, nil
	case "scroll":
		if a.DX == 0 && a.DY == 0 {
			return invalid("scroll needs dx or dy (wheel units, 120 per notch)")
		}
		if abs(a.DX) > 120*100 || abs(a.DY) > 120*100 {
			return invalid("scroll at most 100 notches (12000 units) at once")
		}
		var steps []native.Step
		if a.X != nil || a.Y != nil {
			p, err := point()
			if err != nil {
				return nil, native.Window{}, err
			}
			steps = append(steps, p)
		}
		steps = append(steps, native.Step{Kind: native.Wheel, DX: a.DX, DY: a.DY})
		return hold(mods, steps), native.Window{}, nil
	case "type":
		if a.Text == "" || !utf8.ValidString(a.Text) {
			return invalid("type needs text (UTF-8)")
		}
		if utf8.RuneCountInString(a.Text) > maxTextRunes {
			return invalid("type at most %d characters at once", maxTextRunes)
		}
		return []native.Step{{Kind: native.Text, Text: a.Text}}, native.Window{}, nil
	case "key":
		keys, err := chord(a.Keys)
		if err != nil {
			return nil, native.Window{}, err
		}
		var steps []native.Step
		for _, k := range keys {
			steps = append(steps, native.Step{Kind: native.KeyDown, Key: k})
		}
		for _, k := range slices.Backward(keys) {
			steps = append(steps, native.Step{Kind: native.KeyUp, Key: k})
		}
		return steps, native.Window{}, nil
	case "focus":
		w, ok := o.windows[a.WindowRef]
		if !ok {
			return nil, native.Window{}, errcode.New(WindowStale, "window_ref %q is not one of this observation's windows", trunc(a.WindowRef))
		}
		return nil, w, nil
	}
	return planLow(a, o)
}

// at maps an image point of the observation to a native pointer move,
// refusing points outside the image or outside every monitor.
func (o *observation) at(x, y int) (native.Step, error) {
	f := o.frame
	if x < 0 || y < 0 || x >= f.W || y >= f.H {
		return native.Step{}, errcode.New(InputOutOfBounds, "(%d, %d) is outside the %dx%d image", x, y, f.W, f.H).
			With("requested_coordinate", [2]int{x, y}).With("image", native.Rect{W: f.W, H: f.H})
	}
	nx, ny := f.toNative(x, y)
	for _, m := range o.state.Monitors {
		if m.Bounds.Contains(nx, ny) {
			return native.Step{Kind: native.Move, X: nx, Y: ny}, nil
		}
	}
	var valid []native.Rect
	for _, m := range o.state.Monitors {
		if r := f.toImage(m.Bounds).Intersect(native.Rect{W: f.W, H: f.H}); !r.Empty() {
			valid = append(valid, r)
		}
	}
	return native.Step{}, errcode.New(InputOutOfBounds, "(%d, %d) is not on any monitor", x, y).
		With("requested_coordinate", [2]int{x, y}).With("displays", valid)
}

// normKey returns the canonical name of a key, or "" if it is not one.
func normKey(k string) string {
	l := strings.ToLower(strings.TrimSpace(k))
	if a, ok := native.KeyAliases[l]; ok {
		return a
	}
	if slices.Contains(native.Keys, l) {
		return l
	}
	if utf8.RuneCountInString(k) == 1 {
		return k
	}
	return ""
}

// chord parses "ctrl+shift+t" into keys pressed in order. A literal plus is
// "plus" or a trailing "+" ("ctrl++").
func chord(s string) ([]string, error) {
	if s == "" {
		return nil, errcode.New(errcode.InvalidArgument, "key needs keys, e.g. ctrl+s or enter")
	}
	var parts []string
	if strings.HasSuffix(s, "++") || s == "+" {
		parts = append(strings.Split(strings.TrimSuffix(s, "++"), "+"), "+")
		if s == "+" {
			parts = []string{"+"}
		}
	} else {
		parts = strings.Split(s, "+")
	}
	if len(parts) > 6 {
		return nil, errcode.New(errcode.InvalidArgument, "a chord of at most 6 keys")
	}
	var keys []string
	for _, p := range parts {
		if strings.EqualFold(p, "plus") {
			p = "+"
		}
		k := normKey(p)
		if k == "" {
			return nil, errcode.New(KeyUnmapped, "unknown key %q; named keys are %s, or one character", trunc(p), strings.Join(native.Keys, ", ")).
				With("receipt", desktopapi.Receipt{Status: desktopapi.NotDispatched})
		}
		keys = append(keys, k)
	}
	return keys, nil
}

var modifierKeys = []string{"shift", "ctrl", "alt", "super"}

func modifiers(ms []string) ([]string, error) {
	var out []string
	for _, m := range ms {
		k := normKey(m)
		if !slices.Contains(modifierKeys, k) {
			return nil, errcode.New(errcode.InvalidArgument, "modifier %q is not one of shift, ctrl, alt, super", trunc(m))
		}
		out = append(out, k)
	}
	return out, nil
}

// hold wraps steps in modifier presses and releases.
func hold(mods []string, steps []native.Step) []native.Step {
	if len(mods) == 0 {
		return steps
	}
	var out []native.Step
	for _, m := range mods {
		out = append(out, native.Step{Kind: native.KeyDown, Key: m})
	}
	out = append(out, steps...)
	for _, m := range slices.Backward(mods) {
		out = append(out, native.Step{Kind: native.KeyUp, Key: m})
	}
	return out
}

func button(s string) (native.Button, error) {
	switch s {
	case "", "left":
		return native.Left, nil
	case "middle":
		return native.Middle, nil
	case "right":
		return native.Right, nil
	}
	return 0, errcode.New(errcode.InvalidArgument, "button must be left, middle or right")
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

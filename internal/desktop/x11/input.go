package x11

import (
	"context"
	"fmt"
	"time"
	"unicode"

	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"github.com/hostlink/hostlink/internal/desktop/keysym"
	"github.com/hostlink/hostlink/internal/desktop/native"
)

// X core event types, as XTest's FakeInput takes them.
const (
	evKeyPress      = 2
	evKeyRelease    = 3
	evButtonPress   = 4
	evButtonRelease = 5
	evMotion        = 6
)

// typer dispatches one request's steps.
type typer struct {
	b     *Backend
	km    *keymap
	shift stroke
	caps  bool // Caps Lock is on: letters type with the opposite Shift
	// free are the keycodes with no keysym; reclaim the ones bound by
	// earlier requests to keysyms this one does not type (bindings.go).
	free, reclaim []xproto.Keycode
}

// Dispatch sends steps through XTest. Every key is resolved before the
// first step is sent: a key with no mapping and no spare keycode to bind it
// to fails the whole request with nothing dispatched.
func (b *Backend) Dispatch(ctx context.Context, steps []native.Step) (int, error) {
	if !b.hasXTest {
		return 0, fmt.Errorf("%w: no XTEST extension", native.ErrNotSupported)
	}
	b.input.Lock()
	defer b.input.Unlock()
	km, err := b.loadKeymap()
	if err != nil {
		return 0, err
	}
	b.forgetReplaced(km)
	t := &typer{b: b, km: km, free: km.spares}
	t.shift, _ = km.lookup(keysym.Shift)
	if p, err := xproto.QueryPointer(b.conn, b.root).Reply(); err == nil {
		t.caps = p.Mask&xproto.ModMaskLock != 0
	}
	if err := t.plan(steps); err != nil {
		return 0, err
	}
	for i, s := range steps {
		if err := ctx.Err(); err != nil {
			return i, err
		}
		if err := t.step(ctx, s); err != nil {
			return i, err
		}
	}
	// A round trip: the server has processed every fake event when it
	// answers.
	if _, err := xproto.GetInputFocus(b.conn).Reply(); err != nil {
		return len(steps), err
	}
	return len(steps), nil
}

// CheckSteps implements native.Checker: the refusals that need no keyboard
// map (a key or control character without a keysym, a fraction of a
// notch, an unknown button).
func (b *Backend) CheckSteps(steps []native.Step) error {
	return keysym.CheckSteps(steps, "X11")
}

// plan checks every key of steps has a stroke or a keycode to bind, and
// picks the earlier bindings it may take back.
func (t *typer) plan(steps []native.Step) error {
	if err := keysym.CheckSteps(steps, "X11"); err != nil {
		return err
	}
	need := make(map[xproto.Keysym]bool)
	uses := make(map[xproto.Keysym]bool)
	check := func(ks xproto.Keysym, what string) error {
		if ks == 0 {
			return fmt.Errorf("%w: %q", native.ErrUnmappedKey, what)
		}
		uses[ks] = true
		if _, ok := t.km.lookup(ks); !ok {
			need[ks] = true
		}
		return nil
	}
	for _, s := range steps {
		switch s.Kind {
		case native.KeyDown, native.KeyUp:
			if err := check(keyKeysym(s.Key), s.Key); err != nil {
				return err
			}
		case native.Text:
			for _, r := range s.Text {
				if err := check(runeKeysym(r), string(r)); err != nil {
					return err
				}
			}
		case native.Wheel:
			if s.DX%120 != 0 || s.DY%120 != 0 {
				return fmt.Errorf("%w: X11 scrolls in whole notches (multiples of 120)", native.ErrNotSupported)
			}
		case native.ButtonDown, native.ButtonUp:
			if s.Button < native.Left || s.Button > native.Right {
				return fmt.Errorf("%w: button %d", native.ErrNotSupported, s.Button)
			}
		}
	}
	t.reclaim = t.b.reclaimable(uses)
	if n := len(t.free) + len(t.reclaim); len(need) > n {
		return fmt.Errorf("%w: %d characters are not on the keyboard map and only %d keycodes are free to bind them",
			native.ErrUnmappedKey, len(need), n)
	}
	if t.shift.code == 0 {
		return fmt.Errorf("%w: no Shift key", native.ErrUnmappedKey)
	}
	return nil
}

// resolve returns the stroke for ks, binding it to a free keycode (or
// taking back the least recently used binding) first when the map lacks
// it.
func (t *typer) resolve(ks xproto.Keysym) (stroke, error) {
	if s, ok := t.km.lookup(ks); ok {
		t.b.touch(s.code)
		return s, nil
	}
	var code xproto.Keycode
	switch {
	case len(t.free) > 0:
		code, t.free = t.free[0], t.free[1:]
	case len(t.reclaim) > 0:
		code, t.reclaim = t.reclaim[0], t.reclaim[1:]
	default:
		return stroke{}, native.ErrUnmappedKey
	}
	if err := t.b.bind(t.km, code, ks); err != nil {
		return stroke{}, err
	}
	return stroke{code: code}, nil
}

func (t *typer) fake(typ, detail byte, x, y int) error {
	return xtest.FakeInputChecked(t.b.conn, typ, detail, 0, t.b.root, int16(x), int16(y), 0).Check()
}

func (t *typer) key(s stroke, down bool) error {
	if down {
		if s.shift {
			if err := t.fake(evKeyPress, byte(t.shift.code), 0, 0); err != nil {
				return err
			}
		}
		return t.fake(evKeyPress, byte(s.code), 0, 0)
	}
	if err := t.fake(evKeyRelease, byte(s.code), 0, 0); err != nil {
		return err
	}
	if s.shift {
		return t.fake(evKeyRelease, byte(t.shift.code), 0, 0)
	}
	return nil
}

// wheelButtons are X's scroll buttons: up, down, left, right.
const (
	wheelUp, wheelDown, wheelLeft, wheelRight = 4, 5, 6, 7
)

func (t *typer) wheel(units int, neg, pos byte) error {
	b := pos
	if units < 0 {
		b, units = neg, -units
	}
	for range units / 120 {
		if err := t.fake(evButtonPress, b, 0, 0); err != nil {
			return err
		}
		if err := t.fake(evButtonRelease, b, 0, 0); err != nil {
			return err
		}
	}
	return nil
}

var buttons = map[native.Button]byte{native.Left: 1, native.Middle: 2, native.Right: 3}

func (t *typer) step(ctx context.Context, s native.Step) error {
	switch s.Kind {
	case native.Move:
		return t.fake(evMotion, 0, s.X, s.Y)
	case native.ButtonDown:
		return t.fake(evButtonPress, buttons[s.Button], 0, 0)
	case native.ButtonUp:
		return t.fake(evButtonRelease, buttons[s.Button], 0, 0)
	case native.Wheel:
		if err := t.wheel(s.DY, wheelUp, wheelDown); err != nil {
			return err
		}
		return t.wheel(s.DX, wheelLeft, wheelRight)
	case native.KeyDown, native.KeyUp:
		st, err := t.resolve(keyKeysym(s.Key))
		if err != nil {
			return err
		}
		return t.key(st, s.Kind == native.KeyDown)
	case native.Text:
		for _, r := range s.Text {
			st, err := t.resolve(runeKeysym(r))
			if err != nil {
				return err
			}
			if _, bound := t.b.bound[st.code]; t.caps && !bound && unicode.IsLetter(r) {
				// Caps Lock inverts the case of the keyboard's letters;
				// typing is literal. (Letters hostlink bound are not
				// corrected: see the package doc.)
				st.shift = !st.shift
			}
			if err := t.key(st, true); err != nil {
				return err
			}
			if err := t.key(st, false); err != nil {
				return err
			}
		}
		return nil
	case native.Pause:
		select {
		case <-time.After(s.Delay):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fmt.Errorf("%w: step kind %d", native.ErrNotSupported, s.Kind)
}

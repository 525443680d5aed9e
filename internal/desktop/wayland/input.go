//go:build linux

package wayland

import (
	"context"
	"fmt"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hostlink/hostlink/internal/desktop/keysym"
	"github.com/hostlink/hostlink/internal/desktop/native"
)

// warmup is the pause after a new session's first input events: the
// compositor drops events for a virtual device it has not finished
// setting up, and reports nothing when it has (one to four leading keys
// and a first scroll were lost without it; 300 ms was enough in every run
// measured).
const warmup = 300 * time.Millisecond

// Linux input event codes (linux/input-event-codes.h).
var buttonCodes = map[native.Button]int32{native.Left: 0x110, native.Right: 0x111, native.Middle: 0x112}

// Portal axis numbers for NotifyPointerAxisDiscrete.
const (
	axisVertical   = 0
	axisHorizontal = 1
)

// notify is one portal input call.
type notify struct {
	method string
	args   []any
}

// Dispatch sends steps through the portal's RemoteDesktop. Every step is
// checked before the first is sent: a key without a keysym, a scroll of a
// fraction of a notch or a capture-only session fail with nothing sent.
func (b *Backend) Dispatch(ctx context.Context, steps []native.Step) (int, error) {
	s, err := b.current()
	if err != nil {
		return 0, err
	}
	if r := b.deps.input(); !r.Ready {
		return 0, native.Refuse(native.ErrNotSupported, r.Reason, r.Detail)
	}
	if !s.remote || s.devices&(deviceKeyboard|devicePointer) != deviceKeyboard|devicePointer {
		return 0, native.Refuse(native.ErrPermission, native.ReasonInputNotGranted,
			"the person did not allow remote interaction (keyboard and pointer) for this session")
	}
	plans := make([][]notify, len(steps))
	for i, st := range steps {
		if plans[i], err = b.plan(s, st); err != nil {
			return 0, err
		}
	}
	if err := b.warm(ctx, s, steps); err != nil {
		return 0, err
	}
	for i, st := range steps {
		if st.Kind == native.Pause {
			t := time.NewTimer(st.Delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return i, ctx.Err()
			}
			continue
		}
		for _, n := range plans[i] {
			if err := b.send(ctx, s, n); err != nil {
				return i, err
			}
		}
	}
	return len(steps), nil
}

// CheckSteps implements native.Checker: the refusals that need no session
// (a key or control character without a keysym, a fraction of a notch, an
// unknown button).
func (b *Backend) CheckSteps(steps []native.Step) error {
	return keysym.CheckSteps(steps, "the portal")
}

// plan turns one step into portal calls.
func (b *Backend) plan(s *session, st native.Step) ([]notify, error) {
	key := func(ks uint32, down bool) notify {
		state := uint32(0)
		if down {
			state = 1
		}
		return notify{"NotifyKeyboardKeysym", []any{int32(ks), state}}
	}
	switch st.Kind {
	case native.Move:
		m := s.monitor.Bounds
		if !m.Contains(st.X, st.Y) {
			return nil, fmt.Errorf("%w: (%d, %d) is outside the shared monitor", native.ErrNotSupported, st.X, st.Y)
		}
		return []notify{{"NotifyPointerMotionAbsolute", []any{s.node, float64(st.X - m.X), float64(st.Y - m.Y)}}}, nil
	case native.ButtonDown, native.ButtonUp:
		code, ok := buttonCodes[st.Button]
		if !ok {
			return nil, fmt.Errorf("%w: button %d", native.ErrNotSupported, st.Button)
		}
		state := uint32(0)
		if st.Kind == native.ButtonDown {
			state = 1
		}
		return []notify{{"NotifyPointerButton", []any{code, state}}}, nil
	case native.Wheel:
		if st.DX%120 != 0 || st.DY%120 != 0 {
			return nil, fmt.Errorf("%w: the portal scrolls in whole notches (multiples of 120)", native.ErrNotSupported)
		}
		var out []notify
		if st.DY != 0 {
			out = append(out, notify{"NotifyPointerAxisDiscrete", []any{uint32(axisVertical), int32(st.DY / 120)}})
		}
		if st.DX != 0 {
			out = append(out, notify{"NotifyPointerAxisDiscrete", []any{uint32(axisHorizontal), int32(st.DX / 120)}})
		}
		return out, nil
	case native.KeyDown, native.KeyUp:
		ks := keysym.Key(st.Key)
		if ks == 0 {
			return nil, fmt.Errorf("%w: %q", native.ErrUnmappedKey, st.Key)
		}
		return []notify{key(ks, st.Kind == native.KeyDown)}, nil
	case native.Text:
		var out []notify
		for _, r := range st.Text {
			ks := keysym.Rune(r)
			if ks == 0 {
				return nil, fmt.Errorf("%w: %q", native.ErrUnmappedKey, string(r))
			}
			out = append(out, key(ks, true), key(ks, false))
		}
		return out, nil
	case native.Pause:
		return nil, nil
	}
	return nil, fmt.Errorf("%w: step kind %d", native.ErrNotSupported, st.Kind)
}

// send makes one portal input call, bounded.
func (b *Backend) send(ctx context.Context, s *session, n notify) error {
	args := append([]any{s.handle, map[string]dbus.Variant{}}, n.args...)
	if err := b.portal.call(ctx, ifRemote+"."+n.method, args...).Err; err != nil {
		if b.isClosed(s) {
			b.mu.Lock()
			defer b.mu.Unlock()
			return b.refusal()
		}
		return fmt.Errorf("%s: %w", n.method, err)
	}
	return nil
}

// warm sends a session's warm-up before its first keyboard and its first
// pointer input: a Shift press and release, a pointer motion by nothing,
// then the pause. Neither changes what the person sees.
func (b *Backend) warm(ctx context.Context, s *session, steps []native.Step) error {
	keys, pointer := false, false
	for _, st := range steps {
		switch st.Kind {
		case native.KeyDown, native.KeyUp, native.Text:
			keys = true
		case native.Move, native.ButtonDown, native.ButtonUp, native.Wheel:
			pointer = true
		}
	}
	b.mu.Lock()
	keys, pointer = keys && !s.warmKeys, pointer && !s.warmPointer
	b.mu.Unlock()
	var calls []notify
	if keys {
		calls = append(calls,
			notify{"NotifyKeyboardKeysym", []any{int32(keysym.Shift), uint32(1)}},
			notify{"NotifyKeyboardKeysym", []any{int32(keysym.Shift), uint32(0)}})
	}
	if pointer {
		calls = append(calls, notify{"NotifyPointerMotion", []any{0.0, 0.0}})
	}
	if len(calls) == 0 {
		return nil
	}
	for _, n := range calls {
		if err := b.send(ctx, s, n); err != nil {
			return err
		}
	}
	t := time.NewTimer(warmup)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.mu.Lock()
	s.warmKeys = s.warmKeys || keys
	s.warmPointer = s.warmPointer || pointer
	b.mu.Unlock()
	return nil
}

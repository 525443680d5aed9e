package quartz

import (
	"context"
	"fmt"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// CGEventType values.
const (
	evLeftDown     = 1
	evLeftUp       = 2
	evRightDown    = 3
	evRightUp      = 4
	evMoved        = 5
	evLeftDragged  = 6
	evRightDragged = 7
	evOtherDown    = 25
	evOtherUp      = 26
	evOtherDragged = 27

	kCGHIDEventTap                 = 0
	kCGScrollEventUnitLine         = 1
	kCGMouseEventClickState        = 1
	doubleClickInterval            = 500 * time.Millisecond
	flagShift               uint64 = 0x00020000
	flagControl             uint64 = 0x00040000
	flagAlternate           uint64 = 0x00080000
	flagCommand             uint64 = 0x00100000
)

// keyCodes are macOS virtual key codes (HIToolbox Events.h) for
// native.Keys and, for chords, the ANSI positions of letters and digits.
var keyCodes = map[string]uint16{
	"enter": 0x24, "tab": 0x30, "space": 0x31, "backspace": 0x33, "esc": 0x35,
	"super": 0x37, "shift": 0x38, "capslock": 0x39, "alt": 0x3A, "ctrl": 0x3B,
	"delete": 0x75, "home": 0x73, "end": 0x77, "pageup": 0x74, "pagedown": 0x79,
	"left": 0x7B, "right": 0x7C, "down": 0x7D, "up": 0x7E, "insert": 0x72,
	"f1": 0x7A, "f2": 0x78, "f3": 0x63, "f4": 0x76, "f5": 0x60, "f6": 0x61, "f7": 0x62,
	"f8": 0x64, "f9": 0x65, "f10": 0x6D, "f11": 0x67, "f12": 0x6F, "f13": 0x69,
	"f14": 0x6B, "f15": 0x71, "f16": 0x6A, "f17": 0x40, "f18": 0x4F, "f19": 0x50, "f20": 0x5A,
	"a": 0x00, "s": 0x01, "d": 0x02, "f": 0x03, "h": 0x04, "g": 0x05, "z": 0x06, "x": 0x07,
	"c": 0x08, "v": 0x09, "b": 0x0B, "q": 0x0C, "w": 0x0D, "e": 0x0E, "r": 0x0F, "y": 0x10,
	"t": 0x11, "1": 0x12, "2": 0x13, "3": 0x14, "4": 0x15, "6": 0x16, "5": 0x17, "=": 0x18,
	"9": 0x19, "7": 0x1A, "-": 0x1B, "8": 0x1C, "0": 0x1D, "]": 0x1E, "o": 0x1F, "u": 0x20,
	"[": 0x21, "i": 0x22, "p": 0x23, "l": 0x25, "j": 0x26, "'": 0x27, "k": 0x28, ";": 0x29,
	"\\": 0x2A, ",": 0x2B, "/": 0x2C, "n": 0x2D, "m": 0x2E, ".": 0x2F, "`": 0x32,
}

var modifierFlags = map[string]uint64{"shift": flagShift, "ctrl": flagControl, "alt": flagAlternate, "super": flagCommand}

// keyCode resolves a key for a chord; upper-case letters are their key
// with Shift.
func keyCode(name string) (uint16, uint64, bool) {
	if c, ok := keyCodes[name]; ok {
		return c, 0, true
	}
	if r, n := utf8.DecodeRuneInString(name); n == len(name) && r >= 'A' && r <= 'Z' {
		c, ok := keyCodes[string(r+'a'-'A')]
		return c, flagShift, ok
	}
	return 0, 0, false
}

// clickState counts consecutive clicks so double and triple clicks carry
// the click count macOS applications read.
type clickState struct {
	at     time.Time
	x, y   int
	button native.Button
	count  int64
}

func (b *Backend) post(e uintptr) error {
	if e == 0 {
		return fmt.Errorf("creating the event failed")
	}
	if b.flags != 0 {
		cgEventSetFlags(e, b.flags)
	}
	cgEventPost(kCGHIDEventTap, e)
	cfRelease(e)
	return nil
}

var mouseTypes = map[native.Button][3]uint32{
	native.Left:   {evLeftDown, evLeftUp, evLeftDragged},
	native.Right:  {evRightDown, evRightUp, evRightDragged},
	native.Middle: {evOtherDown, evOtherUp, evOtherDragged},
}

// Dispatch checks every key first (nothing is posted if one is unmapped),
// then posts the steps as CGEvents to the HID event tap.
func (b *Backend) Dispatch(ctx context.Context, steps []native.Step) (int, error) {
	if !axIsProcessTrusted() {
		return 0, fmt.Errorf("%w: Accessibility", native.ErrPermission)
	}
	for _, s := range steps {
		switch s.Kind {
		case native.KeyDown, native.KeyUp:
			if _, _, ok := keyCode(s.Key); !ok {
				return 0, fmt.Errorf("%w: %q", native.ErrUnmappedKey, s.Key)
			}
		case native.Wheel:
			if s.DX%120 != 0 || s.DY%120 != 0 {
				return 0, fmt.Errorf("%w: macOS scrolls in whole lines (multiples of 120)", native.ErrNotSupported)
			}
		}
	}
	b.flags = 0
	x, y, _ := b.Cursor(ctx)
	var held native.Button
	for i, s := range steps {
		if err := ctx.Err(); err != nil {
			return i, err
		}
		var err error
		switch s.Kind {
		case native.Move:
			x, y = s.X, s.Y
			typ := uint32(evMoved)
			if held != 0 {
				typ = mouseTypes[held][2]
			}
			err = b.post(cgEventCreateMouseEvent(0, typ, cgPoint{float64(x), float64(y)}, uint32(max(0, int(held)-1))))
		case native.ButtonDown, native.ButtonUp:
			t := mouseTypes[s.Button]
			e := cgEventCreateMouseEvent(0, t[map[bool]int{true: 0, false: 1}[s.Kind == native.ButtonDown]],
				cgPoint{float64(x), float64(y)}, buttonNumber(s.Button))
			if s.Kind == native.ButtonDown {
				b.clicks.down(x, y, s.Button)
				held = s.Button
			} else {
				held = 0
			}
			if e != 0 {
				cgEventSetIntegerValueField(e, kCGMouseEventClickState, b.clicks.count)
			}
			err = b.post(e)
		case native.Wheel:
			// Quartz's wheel is positive up and left.
			err = b.post(cgEventCreateScrollWheel2(0, kCGScrollEventUnitLine, 2, int32(-s.DY/120), int32(-s.DX/120), 0))
		case native.KeyDown, native.KeyUp:
			code, extra, _ := keyCode(s.Key)
			down := s.Kind == native.KeyDown
			if f, ok := modifierFlags[s.Key]; ok {
				if down {
					b.flags |= f
				} else {
					b.flags &^= f
				}
			}
			saved := b.flags
			b.flags |= extra
			err = b.post(cgEventCreateKeyboardEvent(0, code, down))
			b.flags = saved
		case native.Text:
			err = b.typeText(s.Text)
		case native.Pause:
			select {
			case <-time.After(s.Delay):
			case <-ctx.Done():
				return i, ctx.Err()
			}
		}
		if err != nil {
			return i, err
		}
	}
	return len(steps), nil
}

func buttonNumber(b native.Button) uint32 {
	switch b {
	case native.Right:
		return 1
	case native.Middle:
		return 2
	}
	return 0
}

func (c *clickState) down(x, y int, b native.Button) {
	now := time.Now()
	if b == c.button && x == c.x && y == c.y && now.Sub(c.at) < doubleClickInterval {
		c.count++
	} else {
		c.count = 1
	}
	c.at, c.x, c.y, c.button = now, x, y, b
}

// typeText posts each character as a keyboard event carrying its UTF-16
// string, the layout-independent path that needs no clipboard.
func (b *Backend) typeText(text string) error {
	for _, r := range text {
		if r == '\n' || r == '\r' {
			if err := b.post(cgEventCreateKeyboardEvent(0, keyCodes["enter"], true)); err != nil {
				return err
			}
			if err := b.post(cgEventCreateKeyboardEvent(0, keyCodes["enter"], false)); err != nil {
				return err
			}
			continue
		}
		u := utf16.Encode([]rune{r})
		for _, down := range []bool{true, false} {
			e := cgEventCreateKeyboardEvent(0, 0, down)
			if e == 0 {
				return fmt.Errorf("creating a keyboard event failed")
			}
			cgEventKeyboardSetUnicode(e, len(u), &u[0])
			if err := b.post(e); err != nil {
				return err
			}
		}
	}
	return nil
}

package win32

import (
	"context"
	"fmt"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// virtualKeys maps native.Keys to Windows virtual-key codes.
var virtualKeys = map[string]uint16{
	"enter": 0x0D, "tab": 0x09, "esc": 0x1B, "space": 0x20, "backspace": 0x08,
	"delete": 0x2E, "insert": 0x2D, "up": 0x26, "down": 0x28, "left": 0x25, "right": 0x27,
	"home": 0x24, "end": 0x23, "pageup": 0x21, "pagedown": 0x22,
	"shift": 0x10, "ctrl": 0x11, "alt": 0x12, "super": 0x5B, "capslock": 0x14,
	"menu": 0x5D, "printscreen": 0x2C,
}

func init() {
	for i := 1; i <= 24; i++ {
		virtualKeys[fmt.Sprintf("f%d", i)] = uint16(0x70 + i - 1)
	}
}

const vkShift = 0x10

// stroke is a virtual key with or without Shift.
type stroke struct {
	vk    uint16
	shift bool
}

// keyStroke resolves a key name or one character through the current
// keyboard layout (VkKeyScanW). Characters that need Ctrl or Alt (AltGr)
// cannot take part in a chord and are unmapped.
func keyStroke(name string) (stroke, bool) {
	if vk, ok := virtualKeys[name]; ok {
		return stroke{vk: vk}, true
	}
	r, size := utf8.DecodeRuneInString(name)
	if size != len(name) || r > 0xffff {
		return stroke{}, false
	}
	v, _, _ := procVkKeyScanW.Call(uintptr(r))
	if int16(v) == -1 || v&0x0600 != 0 {
		return stroke{}, false
	}
	return stroke{vk: uint16(v & 0xff), shift: v&0x0100 != 0}, true
}

// absolute converts virtual-screen pixels to SendInput's 0..65535 range.
func absolute(x, y int) (int32, int32) {
	vx, _, _ := procGetSystemMetrics.Call(smXVirtualScreen)
	vy, _, _ := procGetSystemMetrics.Call(smYVirtualScreen)
	vw, _, _ := procGetSystemMetrics.Call(smCXVirtualScreen)
	vh, _, _ := procGetSystemMetrics.Call(smCYVirtualScreen)
	w, h := max(int(int32(vw))-1, 1), max(int(int32(vh))-1, 1)
	return int32((x - int(int32(vx))) * 65535 / w), int32((y - int(int32(vy))) * 65535 / h)
}

var buttonFlags = map[native.Button][2]uint32{
	native.Left:   {mouseeventfLeftDown, mouseeventfLeftUp},
	native.Middle: {mouseeventfMiddleDown, mouseeventfMiddleUp},
	native.Right:  {mouseeventfRightDown, mouseeventfRightUp},
}

// events builds the INPUT records of one step.
func events(s native.Step) ([]input, error) {
	switch s.Kind {
	case native.Move:
		dx, dy := absolute(s.X, s.Y)
		return []input{mouse(mouseeventfMove|mouseeventfAbsolute|mouseeventfVirtualDsk, dx, dy, 0)}, nil
	case native.ButtonDown, native.ButtonUp:
		f, ok := buttonFlags[s.Button]
		if !ok {
			return nil, fmt.Errorf("%w: button %d", native.ErrNotSupported, s.Button)
		}
		if s.Kind == native.ButtonDown {
			return []input{mouse(f[0], 0, 0, 0)}, nil
		}
		return []input{mouse(f[1], 0, 0, 0)}, nil
	case native.Wheel:
		var out []input
		if s.DY != 0 {
			// Windows' wheel is positive away from the user (up).
			out = append(out, mouse(mouseeventfWheel, 0, 0, uint32(int32(-s.DY))))
		}
		if s.DX != 0 {
			out = append(out, mouse(mouseeventfHWheel, 0, 0, uint32(int32(s.DX))))
		}
		return out, nil
	case native.KeyDown, native.KeyUp:
		st, ok := keyStroke(s.Key)
		if !ok {
			return nil, fmt.Errorf("%w: %q", native.ErrUnmappedKey, s.Key)
		}
		if s.Kind == native.KeyDown {
			if st.shift {
				return []input{key(vkShift, 0, 0), key(st.vk, 0, 0)}, nil
			}
			return []input{key(st.vk, 0, 0)}, nil
		}
		if st.shift {
			return []input{key(st.vk, 0, keyeventfKeyUp), key(vkShift, 0, keyeventfKeyUp)}, nil
		}
		return []input{key(st.vk, 0, keyeventfKeyUp)}, nil
	case native.Text:
		var out []input
		for _, r := range s.Text {
			switch r {
			case '\n', '\r':
				out = append(out, key(0x0D, 0, 0), key(0x0D, 0, keyeventfKeyUp))
				continue
			case '\t':
				out = append(out, key(0x09, 0, 0), key(0x09, 0, keyeventfKeyUp))
				continue
			}
			if r < 0x20 || r == 0x7f {
				return nil, fmt.Errorf("%w: control character %U", native.ErrUnmappedKey, r)
			}
			// KEYEVENTF_UNICODE types the UTF-16 code units as characters,
			// independent of the keyboard layout and never through the
			// clipboard.
			for _, u := range utf16.Encode([]rune{r}) {
				out = append(out, key(0, u, keyeventfUnicode), key(0, u, keyeventfUnicode|keyeventfKeyUp))
			}
		}
		return out, nil
	case native.Pause:
		return nil, nil
	}
	return nil, fmt.Errorf("%w: step kind %d", native.ErrNotSupported, s.Kind)
}

// Dispatch builds every step's events first (so an unmapped key dispatches
// nothing), then sends them step by step with SendInput.
func (b *Backend) Dispatch(ctx context.Context, steps []native.Step) (int, error) {
	all := make([][]input, len(steps))
	for i, s := range steps {
		ev, err := events(s)
		if err != nil {
			return 0, err
		}
		all[i] = ev
	}
	if locked() {
		return 0, native.ErrSecureDesktop
	}
	for i, s := range steps {
		if s.Kind == native.Pause {
			select {
			case <-time.After(s.Delay):
			case <-ctx.Done():
				return i, ctx.Err()
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return i, err
		}
		ev := all[i]
		if len(ev) == 0 {
			continue
		}
		n, _, err := procSendInput.Call(uintptr(len(ev)), uintptr(unsafe.Pointer(&ev[0])), unsafe.Sizeof(ev[0]))
		if int(n) != len(ev) {
			if n == 0 {
				// Nothing of this step went in: blocked by UIPI (a more
				// privileged foreground window) or the secure desktop.
				return i, fmt.Errorf("%w: SendInput was blocked: %v", native.ErrPermission, err)
			}
			return i, fmt.Errorf("SendInput inserted %d of %d events", n, len(ev))
		}
	}
	return len(steps), nil
}

package keysym

import (
	"fmt"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// CheckSteps is the part of a keysym backend's (X11's, the Wayland
// portal's) refusals that needs no desktop: every key and character has a
// keysym, every scroll is in whole notches and every button is one of
// three. what names the backend in the message.
func CheckSteps(steps []native.Step, what string) error {
	for _, s := range steps {
		switch s.Kind {
		case native.KeyDown, native.KeyUp:
			if Key(s.Key) == 0 {
				return fmt.Errorf("%w: %q", native.ErrUnmappedKey, s.Key)
			}
		case native.Text:
			for _, r := range s.Text {
				if Rune(r) == 0 {
					return fmt.Errorf("%w: control character %U has no key", native.ErrUnmappedKey, r)
				}
			}
		case native.Wheel:
			if s.DX%120 != 0 || s.DY%120 != 0 {
				return fmt.Errorf("%w: %s scrolls in whole notches (multiples of 120)", native.ErrNotSupported, what)
			}
		case native.ButtonDown, native.ButtonUp:
			if s.Button < native.Left || s.Button > native.Right {
				return fmt.Errorf("%w: button %d", native.ErrNotSupported, s.Button)
			}
		}
	}
	return nil
}

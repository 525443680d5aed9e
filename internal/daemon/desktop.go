package daemon

import (
	"context"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/desktop"
	"github.com/hostlink/hostlink/internal/ops"
)

// readyTimeout bounds the desktop probe behind the link's HELLO.
const readyTimeout = 5 * time.Second

// openComputer opens the desktop service when the local user enabled
// computer use ([computer] enabled); assemble registers its operations.
// When disabled they are not registered at all, so no transport can offer
// them. No desktop is contacted here: the first request connects.
func (d *Daemon) openComputer() {
	cc := d.Config.Computer
	if !cc.Enabled {
		return
	}
	d.Computer = desktop.New(desktop.Options{
		Settle:                time.Duration(cc.SettleMS) * time.Millisecond,
		MaxAccessibilityBytes: cc.MaxAccessibilityBytes,
		Clipboard:             desktop.ClipboardPolicy{Enabled: cc.Clipboard, ReadForeign: cc.Clipboard && cc.ClipboardReadForeign},
	})
}

// closeComputer disconnects the desktops.
func (d *Daemon) closeComputer() {
	if d.Computer != nil {
		d.Computer.Close()
	}
}

// ComputerUse reports whether computer use is enabled and a desktop is
// ready now, with the primary screen's size: the platform link offers
// computer_use in HELLO only then.
func (d *Daemon) ComputerUse() (bool, [2]int) {
	if d.Computer == nil {
		return false, [2]int{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if ok, _ := d.Computer.Ready(ctx); !ok {
		return false, [2]int{}
	}
	size, ok := d.Computer.Screen(ctx)
	return ok, size
}

// computerStatus is the computer_use line of `hostlink status`.
func (d *Daemon) computerStatus() apitype.CapabilityStatus {
	c := apitype.CapabilityStatus{Name: string(ops.ComputerUse)}
	if d.Computer == nil {
		c.Reason = "disabled (enable locally with [computer] enabled = true)"
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	c.Ready, c.Reason = d.Computer.Ready(ctx)
	return c
}

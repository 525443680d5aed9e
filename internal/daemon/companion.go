package daemon

import (
	"fmt"
	"log/slog"

	"github.com/hostlink/hostlink/internal/companion"
)

// companionState is the runtime side of the companion route, while
// [companion] listen is set.
type companionState struct {
	pairings *companion.Pairings
	runtime  *companion.Runtime
}

// openCompanion listens for companions when [companion] listen is set and
// registers companion_run_command and companion_status. Companion desktops
// join computer_desktops only when computer control is enabled here too.
func (d *Daemon) openCompanion() error {
	cc := d.Config.Companion
	if cc.Listen == "" {
		return nil
	}
	pairs, err := companion.OpenPairings(d.Dirs.State)
	if err != nil {
		return fmt.Errorf("companion pairings: %w", err)
	}
	o := companion.RuntimeOptions{Pairings: pairs, MaxOutputBytes: cc.MaxOutputBytes}
	if d.Computer != nil {
		o.Desktops = d.Computer
	}
	rt := companion.NewRuntime(o)
	addr, err := rt.Listen(cc.Listen, cc.ContainerInterface)
	if err != nil {
		pairs.Close()
		return fmt.Errorf("companion listen %s: %w", cc.Listen, err)
	}
	companion.Register(d.Registry, rt)
	d.companion = companionState{pairings: pairs, runtime: rt}
	slog.Info("listening for companions", "addr", addr)
	return nil
}

// closeCompanion drops the companions and stops listening.
func (d *Daemon) closeCompanion() {
	if d.companion.runtime == nil {
		return
	}
	d.companion.runtime.Close()
	d.companion.pairings.Close()
}

package daemon

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/hostlink/hostlink/internal/companion"
)

// companionState is the runtime side of the companion route, while
// [companion] listen is set.
type companionState struct {
	pairings *companion.Pairings
	runtime  *companion.Runtime
	listen   string // the companion listener's address, if it listens
}

// openCompanion serves companions when [companion] listen or wsl_helper
// is set; assemble registers companion_run_command and companion_status.
// Companion desktops join computer_desktops only when computer control is
// enabled here too.
func (d *Daemon) openCompanion() error {
	cc := d.Config.Companion
	if cc.Listen == "" && cc.WSLHelper == "" {
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
	listen := ""
	if cc.Listen != "" {
		addr, err := rt.Listen(cc.Listen, cc.ContainerInterface)
		if err != nil {
			pairs.Close()
			return fmt.Errorf("companion listen %s: %w", cc.Listen, err)
		}
		listen = fmt.Sprint(addr)
		slog.Info("transport up", "transport", "companion", "address", listen)
	}
	if cc.WSLHelper != "" {
		// Outside WSL, or with interop off, the helper cannot run;
		// companion_status says why.
		if route := wslInterop(context.Background()); route.Available {
			rt.StartHelper(companion.Helper{Argv: []string{cc.WSLHelper}, Commands: cc.WSLHelperCommands, NoDesktop: d.Computer == nil})
			slog.Info("starting the WSL interop helper", "program", cc.WSLHelper)
		} else {
			slog.Warn("[companion] wsl_helper is set but the WSL interop route is not available", "reason", route.Reason, "detail", route.Detail)
		}
	}
	d.companion = companionState{pairings: pairs, runtime: rt, listen: listen}
	return nil
}

// wslInterop detects the WSL interop route; tests replace it.
var wslInterop = companion.WSLInterop

// closeCompanion drops the companions and stops listening.
func (d *Daemon) closeCompanion() {
	if d.companion.runtime == nil {
		return
	}
	d.companion.runtime.Close()
	d.companion.pairings.Close()
	if d.companion.listen != "" {
		slog.Info("transport down", "transport", "companion", "address", d.companion.listen)
	}
}

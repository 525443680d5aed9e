package update

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/autostart"
)

// restartPlan is how a service manager says whether it runs hostlink
// (probe exits 0 and, for Task Scheduler, prints "Running") and how it
// restarts it.
type restartPlan struct {
	probe   []string
	running string // probe's output must contain this ("" : exit 0 is enough)
	restart [][]string
}

func planFor(kind autostart.Kind, uid int) restartPlan {
	switch kind {
	case autostart.Launchd:
		target := "gui/" + strconv.Itoa(uid) + "/" + autostart.LaunchdLabel
		return restartPlan{probe: []string{"launchctl", "print", target},
			restart: [][]string{{"launchctl", "kickstart", "-k", target}}}
	case autostart.TaskScheduler:
		return restartPlan{probe: []string{"schtasks", "/Query", "/TN", autostart.TaskName, "/FO", "CSV", "/NH"}, running: "Running",
			restart: [][]string{{"schtasks", "/End", "/TN", autostart.TaskName}, {"schtasks", "/Run", "/TN", autostart.TaskName}}}
	}
	return restartPlan{probe: []string{"systemctl", "--user", "is-active", "--quiet", autostart.SystemdUnit},
		restart: [][]string{{"systemctl", "--user", "restart", autostart.SystemdUnit}}}
}

// Restarted says what Restart did.
type Restarted struct {
	// Commands ran, in order; none when the service manager does not run
	// hostlink (or is not here).
	Commands []string `json:"commands,omitempty"`
}

// Restart restarts hostlink through kind's service manager when that
// manager runs it now, so that the daemon runs the new binary. When the
// manager does not run it, it does nothing: the caller tells the user.
func Restart(ctx context.Context, kind autostart.Kind, uid int) (*Restarted, error) {
	p := planFor(kind, uid)
	if _, err := exec.LookPath(p.probe[0]); err != nil {
		return &Restarted{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := run(ctx, os.TempDir(), p.probe...)
	if err != nil || !strings.Contains(out, p.running) {
		return &Restarted{}, nil
	}
	r := &Restarted{}
	for _, c := range p.restart {
		r.Commands = append(r.Commands, strings.Join(c, " "))
		if _, err := run(ctx, os.TempDir(), c...); err != nil {
			return r, fmt.Errorf("%s: %v", strings.Join(c, " "), err)
		}
	}
	return r, nil
}

//go:build linux

package wayland

import (
	"context"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/procs"
)

// deps is what the portal and GStreamer offer, probed once per backend.
type deps struct {
	bus, portal                             bool
	remoteVersion, castVersion, shotVersion uint32
	sources, devices, cursorModes           uint32
	cursorMode                              uint32 // what sessions ask for
	gst, inspect, pwdump                    string // program paths ("" when missing)
	elements                                map[string]bool
}

// gstElements are the GStreamer elements a capture needs.
var gstElements = []string{"pipewiresrc", "videoconvert", "fdsink"}

// probeTimeout bounds one gst-inspect-1.0 run (the first of a user builds
// GStreamer's plugin registry, which takes seconds).
const probeTimeout = 20 * time.Second

func probe(ctx context.Context, p *portal) deps {
	var d deps
	d.elements = map[string]bool{}
	if p != nil {
		d.bus = true
		d.portal = p.hasPortal(ctx)
	}
	if d.portal {
		d.remoteVersion = p.version(ctx, ifRemote)
		d.castVersion = p.version(ctx, ifCast)
		d.shotVersion = p.version(ctx, ifShot)
		d.sources = p.uint32Property(ctx, ifCast, "AvailableSourceTypes")
		d.devices = p.uint32Property(ctx, ifRemote, "AvailableDeviceTypes")
		d.cursorModes = p.uint32Property(ctx, ifCast, "AvailableCursorModes")
	}
	// Hidden where offered: frames show what a screenshot would, and the
	// pointer cannot be reported anyway.
	d.cursorMode = cursorEmbedded
	if d.cursorModes&cursorHidden != 0 {
		d.cursorMode = cursorHidden
	}
	d.gst, _ = exec.LookPath("gst-launch-1.0")
	d.inspect, _ = exec.LookPath("gst-inspect-1.0")
	d.pwdump, _ = exec.LookPath("pw-dump")
	if d.inspect != "" {
		for _, e := range gstElements {
			d.elements[e] = hasElement(ctx, d.inspect, e)
		}
	}
	return d
}

// found caches the elements gst-inspect-1.0 found, per process: they do
// not go away while hostlink runs, and each check is a process start.
var found sync.Map // gst-inspect-1.0 path and element name → true

func hasElement(ctx context.Context, inspect, name string) bool {
	key := inspect + "\x00" + name
	if _, ok := found.Load(key); ok {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	// --exists alone also wants the plugin's version to be GStreamer's own,
	// which pipewiresrc's (PipeWire's) is not.
	st, err := run(ctx, procs.Spec{Argv: []string{inspect, "--exists", "--atleast-version=0.0", name}, Dir: "/"}, nil, nil)
	if err != nil || st.ExitCode != 0 {
		return false
	}
	found.Store(key, true)
	return true
}

// capture says whether a capture path is there, and else what is
// missing, most basic first. Where the portal has no screen cast of a
// monitor but a Screenshot interface, screenshots are the path.
func (d deps) capture() native.Readiness {
	switch {
	case !d.bus:
		return native.Readiness{Reason: ReasonNoBus, Detail: "DBUS_SESSION_BUS_ADDRESS is not set, so the desktop portal cannot be reached"}
	case !d.portal:
		return native.Readiness{Reason: ReasonPortalMissing, Detail: "no xdg-desktop-portal on the session bus (install xdg-desktop-portal and the backend for this desktop, e.g. xdg-desktop-portal-gnome or xdg-desktop-portal-kde)"}
	case d.screenshotOnly():
		return native.Readiness{Ready: true, Detail: "the desktop portal has no screen cast of a monitor, only Screenshot: observe the whole desktop, no input"}
	case d.castVersion == 0:
		return native.Readiness{Reason: ReasonCastMissing, Detail: "the desktop portal has no ScreenCast interface (its backend for this compositor lacks it)"}
	case d.sources&sourceMonitor == 0:
		return native.Readiness{Reason: ReasonCastMissing, Detail: "the desktop portal's ScreenCast cannot share a monitor"}
	case d.gst == "" || d.inspect == "":
		return native.Readiness{Reason: ReasonGstMissing, Detail: "GStreamer's gst-launch-1.0 and gst-inspect-1.0 are not installed (gstreamer1.0-tools)"}
	case !d.elements["pipewiresrc"]:
		return native.Readiness{Reason: ReasonPipewiresrc, Detail: "GStreamer has no pipewiresrc element (gstreamer1.0-pipewire)"}
	case !d.elements["videoconvert"] || !d.elements["fdsink"]:
		return native.Readiness{Reason: ReasonGstMissing, Detail: "GStreamer lacks videoconvert or fdsink (gstreamer1.0-plugins-base, gstreamer1.0-tools)"}
	case d.pwdump == "":
		return native.Readiness{Reason: ReasonPipewireTools, Detail: "pw-dump is not installed (pipewire-bin): hostlink needs it to find the shared stream's PipeWire serial"}
	}
	return native.Readiness{Ready: true}
}

// screenshotOnly: the portal has no screen cast of a monitor, but takes
// screenshots.
func (d deps) screenshotOnly() bool {
	return d.portal && (d.castVersion == 0 || d.sources&sourceMonitor == 0) && d.shotVersion > 0
}

// input says whether input can be injected through the portal.
func (d deps) input() native.Readiness {
	switch {
	case !d.bus || !d.portal:
		return d.capture()
	case d.remoteVersion == 0:
		return native.Readiness{Reason: ReasonRemoteMissing, Detail: "the desktop portal has no RemoteDesktop interface: observe only, no input"}
	case d.devices&(deviceKeyboard|devicePointer) != deviceKeyboard|devicePointer:
		return native.Readiness{Reason: ReasonRemoteMissing, Detail: "the desktop portal's RemoteDesktop offers no keyboard and pointer"}
	}
	return native.Readiness{Ready: true}
}

// run runs a helper program through package procs (its own process group,
// killed with hostlink), bounded by ctx.
func run(ctx context.Context, spec procs.Spec, stdout, stderr io.Writer) (procs.State, error) {
	p, err := procs.Start(spec, stdout, stderr)
	if err != nil {
		return procs.State{}, err
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		p.Kill()
	}
	st, err := p.Wait()
	if ctx.Err() != nil {
		return st, ctx.Err()
	}
	return st, err
}

// Report is what Probe found, for hostlink doctor.
type Report struct {
	Bus, Portal bool
	// Versions of the portal interfaces the route uses, by name
	// (RemoteDesktop, ScreenCast, Screenshot); absent when missing.
	Versions map[string]uint32
	// Programs: gst-launch-1.0, gst-inspect-1.0 and pw-dump, with their
	// paths ("" when not installed).
	Programs map[string]string
	// Elements: the GStreamer elements a capture needs, and whether
	// GStreamer has each.
	Elements       map[string]bool
	Capture, Input native.Readiness
}

// Probe checks the Wayland route's dependencies on the session cfg names
// without opening a session (no dialog is shown).
func Probe(ctx context.Context, cfg Config) Report {
	var p *portal
	if cfg.Bus != "" {
		if pp, err := dialPortal(ctx, cfg.Bus); err == nil {
			p = pp
			defer p.close()
		}
	}
	d := probe(ctx, p)
	r := Report{Bus: d.bus, Portal: d.portal, Versions: map[string]uint32{},
		Programs: map[string]string{"gst-launch-1.0": d.gst, "gst-inspect-1.0": d.inspect, "pw-dump": d.pwdump},
		Elements: d.elements, Capture: d.capture(), Input: d.input()}
	for name, v := range map[string]uint32{"RemoteDesktop": d.remoteVersion, "ScreenCast": d.castVersion, "Screenshot": d.shotVersion} {
		if v > 0 {
			r.Versions[name] = v
		}
	}
	return r
}

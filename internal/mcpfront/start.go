package mcpfront

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/private"
	"github.com/hostlink/hostlink/internal/procs"
)

// CodeStartFailed: the daemon `hostlink mcp` started exited before it
// served.
const CodeStartFailed errcode.Code = "DAEMON_START_FAILED"

// ReadyPrefix starts the line a daemon started with `serve --ready-stdout`
// writes on its stdout once it serves; the web console's address follows.
const ReadyPrefix = "hostlink ready "

// Start is how Run starts a daemon.
type Start struct {
	Executable string   // this hostlink binary
	Args       []string // its arguments: global flags, then serve and its flags
	IdleExit   time.Duration
	// Output is the file the daemon's stdout and stderr go to after it is
	// ready (its log proper goes where [log] says).
	Output string
	// Timeout is a hang guard on the daemon's start.
	Timeout time.Duration
}

// run starts the daemon and waits until it serves or exits; it returns the
// console's address. A daemon that lost a race to another one starting at
// the same moment is not an error: the other one serves.
func (s Start) run(ctx context.Context) (string, error) {
	if err := private.MkdirAll(filepath.Dir(s.Output)); err != nil {
		return "", err
	}
	out, err := private.OpenFile(s.Output, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return "", fmt.Errorf("the started daemon's output file: %w", err)
	}
	defer out.Close()
	start, _ := out.Seek(0, io.SeekEnd)
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer pr.Close()
	// The daemon must not be tied to the client's life, signals or
	// context: it is started for every client of this user.
	d, err := procs.StartDaemon(append([]string{s.Executable}, s.Args...), pw, out)
	pw.Close()
	if err != nil {
		return "", fmt.Errorf("starting a hostlink daemon: %w", err)
	}
	// Reaped here, also when it ends while this front end still runs.
	exited := make(chan error, 1)
	go func() { exited <- d.Wait() }()
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(pr).ReadString('\n')
		ready <- line
	}()
	guard := time.NewTimer(s.Timeout)
	defer guard.Stop()
	select {
	case line := <-ready:
		if console, ok := strings.CutPrefix(strings.TrimSpace(line), strings.TrimSpace(ReadyPrefix)); ok {
			return strings.TrimSpace(console), nil
		}
		// The daemon closed its stdout without being ready: it exits.
		err := <-exited
		return "", s.failed(err, start)
	case <-guard.C:
		d.Kill()
		<-exited
		return "", errcode.New(CodeStartFailed, "the hostlink daemon did not start within %s; its output is in %s", s.Timeout, s.Output)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// failed describes a daemon that exited before it served, with the end of
// what it wrote. One that found another daemon already serving is no
// failure.
func (s Start) failed(waitErr error, from int64) error {
	b, _ := os.ReadFile(s.Output)
	if from <= int64(len(b)) {
		b = b[from:]
	}
	if bytes.Contains(b, []byte("already running")) {
		return nil
	}
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	var ee *exec.ExitError
	status := "ended"
	if errors.As(waitErr, &ee) {
		status = "ended (" + ee.String() + ")"
	}
	said := strings.TrimSpace(string(b))
	if said == "" {
		said = "nothing; its log may say more (hostlink logs)"
	}
	return errcode.New(CodeStartFailed, "hostlink mcp started a hostlink daemon, which %s before serving. It said: %s\nFix that, or start the daemon yourself with hostlink serve.", status, said)
}

package agentcli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/sandbox"
)

// Spec describes a CLI process to start.
type Spec struct {
	Argv []string
	Dir  string            // absolute working directory
	Env  map[string]string // over internal/procs' scrubbed baseline
	// Stderr receives the CLI's log output (nil discards it): CLIs log
	// there, and logs may hold secrets, so hostlink keeps none of it.
	Stderr io.Writer
	// Sandbox confines the CLI (nil: it runs with hostlink's permissions).
	Sandbox *sandbox.Policy
}

// Proc is a CLI process speaking newline-delimited JSON on stdio.
type Proc struct {
	p     *procs.Process
	stdin io.WriteCloser
	wmu   sync.Mutex
	done  chan struct{} // closed after the last line and the exit callback
}

// Start starts spec. line is called for each line of standard output, in
// order, from one goroutine (a line over MaxLine is skipped); exit is called
// on that goroutine once the output has ended and the process is gone.
func Start(spec Spec, line func([]byte), exit func(procs.State)) (*Proc, error) {
	pr, pw := io.Pipe()
	p, err := procs.Start(procs.Spec{Argv: spec.Argv, Dir: spec.Dir, Env: spec.Env, Stdin: true, Sandbox: spec.Sandbox}, pw, spec.Stderr)
	if err != nil {
		pw.Close()
		return nil, err
	}
	c := &Proc{p: p, stdin: p.Stdin(), done: make(chan struct{})}
	go func() {
		p.Wait()
		pw.Close()
	}()
	go func() {
		defer close(c.done)
		lr := NewLineReader(pr, 0)
		for {
			b, err := lr.Next()
			if errors.Is(err, ErrLineTooLong) {
				continue
			}
			if err != nil {
				break
			}
			if len(bytes.TrimSpace(b)) > 0 {
				line(b)
			}
		}
		pr.Close() // unblocks procs' copy should we stop early
		st, _ := p.Wait()
		if exit != nil {
			exit(st)
		}
	}()
	return c, nil
}

// Send writes v as one JSON line.
func (c *Proc) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		return errors.New("the runtime process is gone")
	}
	return nil
}

// Stop closes the process's input, which ends the CLIs hostlink drives,
// waits up to grace, then ends its whole tree.
func (c *Proc) Stop(grace time.Duration) {
	c.wmu.Lock()
	c.stdin.Close()
	c.wmu.Unlock()
	select {
	case <-c.done:
		return
	case <-time.After(grace):
	}
	c.p.Terminate(time.Second)
	<-c.done
}

// Kill ends the process tree at once.
func (c *Proc) Kill() {
	c.p.Kill()
	<-c.done
}

// Output runs argv to its end and returns its standard output, at most
// 1 MiB of it (version and status commands).
func Output(ctx context.Context, spec Spec) (string, procs.State, error) {
	if spec.Dir == "" {
		spec.Dir = os.TempDir()
	}
	return procs.Output(ctx, procs.Spec{Argv: spec.Argv, Dir: spec.Dir, Env: spec.Env}, 1<<20, spec.Stderr)
}

// Passthrough returns the variables of hostlink's environment a runtime
// needs to reach its model (names exact, or by prefix when ending in *),
// with extra on top.
func Passthrough(names []string, extra map[string]string) map[string]string {
	out := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		for _, n := range names {
			if p, ok := strings.CutSuffix(n, "*"); ok && strings.HasPrefix(k, p) || k == n {
				out[k] = v
			}
		}
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// NetworkEnv are the variables every runtime may need to reach its model
// through a proxy or a private CA.
var NetworkEnv = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS"}

// Describe says how a process ended: "status N" or the signal's name.
func Describe(st procs.State) string {
	if st.Signal != "" {
		return st.Signal
	}
	return fmt.Sprintf("status %d", st.ExitCode)
}

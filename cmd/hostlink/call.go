package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/textsafe"
)

type callCmd struct {
	Op     string `arg:"" help:"Operation name, e.g. read_file (see the README's tool table)."`
	Params string `arg:"" optional:"" default:"{}" help:"Arguments as a JSON object."`
	JSON   bool   `help:"Print the result (or error) as one line of JSON, for scripts."`
}

func (c *callCmd) Run(ctx context.Context) error {
	// What the call waits for (an approval: where to answer it) goes to
	// stderr, once per distinct message, so that stdout stays the result.
	var last string
	res, err := daemonCallProgress(ctx, c.Op, json.RawMessage(c.Params), func(p ipc.Progress) {
		if p.Message != "" && p.Message != last {
			last = p.Message
			fmt.Fprintf(os.Stderr, "hostlink: %s\n", p.Message)
		}
	})
	var e *errcode.Error
	if c.JSON && errors.As(err, &e) {
		// A daemon error is an answer too: scripts get it on stdout as
		// JSON, and the exit status still says it failed.
		b, _ := json.Marshal(map[string]any{"error": e})
		fmt.Println(string(textsafe.JSON(b)))
		return errSilent
	}
	if err != nil {
		return err
	}
	if c.JSON {
		fmt.Println(string(textsafe.JSON(res)))
		return nil
	}
	return printIndented(res)
}

// printIndented prints a JSON document indented, in the order the daemon
// wrote it, with the characters a terminal would act on or hide escaped
// (textsafe.JSON).
func printIndented(raw json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	b.WriteByte('\n')
	_, err := os.Stdout.Write(textsafe.JSON(b.Bytes()))
	return err
}

// daemonCall makes one request to the running daemon over the control
// channel.
func daemonCall(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return daemonCallProgress(ctx, method, params, nil)
}

// daemonCallProgress is daemonCall handing progress reports to progress.
// Interrupting it (Ctrl+C) closes the connection, which cancels the call
// in the daemon.
func daemonCallProgress(ctx context.Context, method string, params json.RawMessage, progress func(ipc.Progress)) (json.RawMessage, error) {
	dirs, err := paths.Resolve()
	if err != nil {
		return nil, err
	}
	addr, err := ipc.Address(dirs.Runtime)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cl, err := ipc.Connect(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	stop := context.AfterFunc(ctx, func() { cl.Close() })
	defer stop()
	res, err := cl.CallProgress(ctx, method, params, progress)
	if err != nil && ctx.Err() != nil {
		// The connection was closed under the call: what the user needs
		// is why, not the closed socket's error.
		return nil, cancelledCall(ctx)
	}
	return res, err
}

// interruptedError is a call the user interrupted (Ctrl+C) or that got
// no answer in time; closing the connection cancelled it in the daemon.
type interruptedError struct{ msg string }

func (e *interruptedError) Error() string { return e.msg }

// ExitCode is the shell's for a process ended by SIGINT.
func (e *interruptedError) ExitCode() int { return 130 }

func cancelledCall(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errors.New("the daemon did not answer within 10 minutes; the call is cancelled there")
	}
	return &interruptedError{"interrupted: the call is cancelled in the daemon (an approval it waited for is withdrawn)"}
}

// errSilent makes hostlink exit non-zero without printing anything more:
// the command has already said what went wrong.
var errSilent = errors.New("")

func exitError(err error) {
	if !errors.Is(err, errSilent) {
		// An error may quote what a caller sent (a path, a name).
		fmt.Fprintln(os.Stderr, "hostlink:", textsafe.Block(err.Error()))
	}
	os.Exit(exitCode(err))
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/paths"
)

type stopCmd struct{}

// Run asks the daemon to stop over the control channel and returns once it
// no longer serves (it closes every connection as it stops).
func (stopCmd) Run(ctx context.Context) error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	addr, err := ipc.Address(dirs.Runtime)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cl, err := ipc.Connect(ctx, addr)
	if err != nil {
		return err
	}
	defer cl.Close()
	// The daemon may close the connection before its answer is written:
	// either way it is stopping.
	_, err = cl.Call(ctx, apitype.MethodStop, nil)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	if err := cl.WaitClosed(ctx); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("waiting for the daemon to stop: %w", err)
	}
	fmt.Println("hostlink daemon stopped")
	return nil
}

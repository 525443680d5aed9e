package main

import (
	"context"
	"time"
)

// client is one MCP client implementation the benchmark drives every
// server with: the MCP Go SDK in this process, or the TypeScript SDK in a
// small Node program (tsdriver.mjs). Both run the same scenarios on the
// same data set and their samples go through the same statistics.
type client interface {
	Name() string    // "go-sdk", "ts-sdk"
	Version() string // the SDK's version
	// start spawns s and completes MCP initialization with it.
	start(ctx context.Context, s *server) (session, error)
}

// session is one live client connection to a started server.
type session interface {
	// call runs one tool and fails on a transport error or an isError
	// result. The result's text (text blocks joined, or the structured
	// content as JSON when there are none) is returned when wantText is set.
	call(ctx context.Context, tool string, args map[string]any, wantText bool) (string, error)
	// listTools runs tools/list, recording the server's tools on first use.
	listTools(ctx context.Context) error
	// images is how many image blocks the last call's result had.
	images() int
	// received is the size in bytes of the content of the results received
	// since the last call to received: each result's content array as
	// JSON, which is what reaches the model.
	received() int64
	// pid is the server process's.
	pid() int
	// clientPID is the process the client library runs in (0: this one).
	clientPID() int
	close()
	// relay is the time this session has spent so far outside the client
	// library's own work: for the TypeScript client, starting the Node
	// program and passing requests and replies between it and this
	// harness. Timings subtract the relay time accrued during the timed
	// work, so each client is timed as an application embedding it sees it.
	relay() time.Duration
}

// timeOp runs fn and returns how long it took, less the relay time ss
// accrued meanwhile (ss may be nil; fn may set it, as a start does).
func timeOp(ss *session, fn func() error) (time.Duration, error) {
	var r0 time.Duration
	if *ss != nil {
		r0 = (*ss).relay()
	}
	t := time.Now()
	err := fn()
	el := time.Since(t)
	if *ss != nil {
		el -= (*ss).relay() - r0
	}
	return el, err
}

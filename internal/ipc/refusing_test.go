package ipc

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/tstest"
)

// memListener hands the server in-memory connections, whose writes block
// until the other end reads: a refused peer that never reads then holds
// its refuser for as long as it likes (up to refuseTimeout).
type memListener struct {
	conns     chan net.Conn
	closeOnce sync.Once
	done      chan struct{}
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *memListener) dial(t *testing.T) net.Conn {
	t.Helper()
	server, client := net.Pipe()
	t.Cleanup(func() { client.Close() })
	select {
	case l.conns <- server:
	case <-time.After(30 * time.Second):
		t.Fatal("the server stopped accepting")
	}
	return client
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

type memAddr struct{}

func (memAddr) Network() string { return "pipe" }
func (memAddr) String() string  { return "pipe" }

// TestRefusingBound: at most maxRefusing refused peers are told why at
// once. With that many refused peers not reading, the next is disconnected
// without a word, and audited all the same; once they are answered, a
// refused peer is told why again. Meanwhile the accept loop goes on.
func TestRefusingBound(t *testing.T) {
	a := &memAudit{}
	s := &Server{Registry: testRegistry(a), Refusals: audit.NewRefusals(a, time.Hour),
		measure: func(net.Conn) (Peer, error) { return Peer{UID: 4242, PID: 7}, nil }}
	ln := newMemListener()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	told := func(c net.Conn) bool {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		b, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("reading the refusal: %v", err)
		}
		return len(b) > 0
	}

	var waiting []net.Conn
	for range maxRefusing { // at the limit
		waiting = append(waiting, ln.dial(t))
	}
	past := ln.dial(t)
	if told(past) {
		t.Fatal("past the limit, a refused peer was told why")
	}
	for i, c := range waiting {
		if !told(c) {
			t.Fatalf("refused peer %d of %d was not told why", i+1, maxRefusing)
		}
	}
	tstest.WaitFor(t, 10*time.Second, "the refusers to finish", func() bool { return len(s.refusing) == 0 })
	if !told(ln.dial(t)) {
		t.Fatal("with the refusers free again, a refused peer was not told why")
	}
	if len(a.find("ipc_peer_refused")) == 0 {
		t.Fatal("no refusal audited")
	}
}

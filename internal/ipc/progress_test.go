package ipc

import (
	"context"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// TestProgressAndDisconnect: an operation's progress reaches the client as
// frames before the answer, and a client that closes the connection while
// its call runs cancels the call.
func TestProgressAndDisconnect(t *testing.T) {
	cancelled := make(chan struct{})
	ln, addr := testListen(t)
	a := &memAudit{}
	reg := ops.New(ops.Options{Audit: a})
	spec := func(name string) ops.Spec {
		return ops.Spec{Name: name, Description: name, Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true}
	}
	ops.Register(reg, spec("report"), func(_ context.Context, c *ops.Call, _ struct{}) (whoamiOut, error) {
		c.Progress(1, 2, "half")
		c.Progress(2, 2, "all")
		return whoamiOut{Peer: "done"}, nil
	})
	started := make(chan struct{})
	ops.Register(reg, spec("hold"), func(ctx context.Context, _ *ops.Call, _ struct{}) (whoamiOut, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return whoamiOut{}, ctx.Err()
	})
	s := &Server{Registry: reg, Refusals: audit.NewRefusals(a, time.Hour)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Serve(ctx, ln)

	cl, err := Connect(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []Progress
	res, err := cl.CallProgress(context.Background(), "report", nil, func(p Progress) { got = append(got, p) })
	if err != nil || string(res) != `{"peer":"done"}` {
		t.Fatalf("report: %s, %v", res, err)
	}
	if len(got) != 2 || got[0] != (Progress{Done: 1, Total: 2, Message: "half"}) || got[1].Message != "all" {
		t.Fatalf("progress frames: %+v", got)
	}
	// The same connection still answers after progress frames.
	if _, err := cl.Call(context.Background(), "report", nil); err != nil {
		t.Fatal(err)
	}

	c, err := Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte(request("h1", "hold", "{}") + "\n"))
	<-started
	c.Close()
	<-cancelled
}

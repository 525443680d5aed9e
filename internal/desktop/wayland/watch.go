//go:build linux

package wayland

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/hostlink/hostlink/internal/procs"
)

// maxWatchValue bounds one JSON value pw-dump --monitor writes (its first
// is the whole graph, later ones the objects that changed).
const maxWatchValue = 16 << 20

// pwObject is one entry of pw-dump's output: a removed object is its id
// with "info": null.
type pwObject struct {
	ID   uint32          `json:"id"`
	Type string          `json:"type"`
	Info json.RawMessage `json:"info"`
}

// lostBy reports whether objs, one update of pw-dump --monitor, end the
// stream of node whose serial is serial: the node removed, or its id now
// naming another object (PipeWire reuses ids; serials are never reused).
// It says how, for the person reading the desktop's readiness.
func lostBy(objs []pwObject, node uint32, serial uint64) (string, bool) {
	for _, o := range objs {
		if o.ID != node {
			continue
		}
		if bytes.Equal(bytes.TrimSpace(o.Info), []byte("null")) {
			return fmt.Sprintf("the shared stream's PipeWire node %d was removed", node), true
		}
		if o.Type != "" && o.Type != "PipeWire:Interface:Node" {
			return fmt.Sprintf("the shared stream's PipeWire node id %d now names a %s", node, o.Type), true
		}
		var info struct {
			Props map[string]json.RawMessage `json:"props"`
		}
		if json.Unmarshal(o.Info, &info) != nil {
			continue
		}
		if raw, ok := info.Props["object.serial"]; ok {
			if n, err := strconv.ParseUint(string(bytes.TrimSpace(raw)), 10, 64); err == nil && n != serial {
				return fmt.Sprintf("the shared stream's PipeWire node id %d now names another stream (serial %d, not %d)", node, n, serial), true
			}
		}
	}
	return "", false
}

// watch follows PipeWire's graph with pw-dump --monitor for as long as s
// is the granted session and ctx lives, and ends s as lost the moment its
// stream's node goes (the portal sends no Closed signal then, and a
// capture of a stream that is gone only times out). If the monitor itself
// ends first, the node is looked up once: gone, or unreadable, is lost;
// there, a capture that times out looks it up again (grab).
func (b *Backend) watch(ctx context.Context, s *session) {
	pr, pw := io.Pipe()
	exited := make(chan struct{})
	mctx, stop := context.WithCancel(ctx)
	go func() {
		defer close(exited)
		_, err := run(mctx, procs.Spec{Argv: []string{b.deps.pwdump, "--monitor", "--no-colors"}, Dir: "/", Env: b.pipewireEnv()}, pw, io.Discard)
		if err == nil {
			err = io.EOF
		}
		pw.CloseWithError(err)
	}()
	in := &capReader{r: pr}
	dec := json.NewDecoder(in)
	for {
		in.left = maxWatchValue
		var objs []pwObject
		if err := dec.Decode(&objs); err != nil {
			break
		}
		if why, lost := lostBy(objs, s.node, s.serial); lost {
			b.streamLost(s, why)
			break
		}
	}
	stop()
	pr.CloseWithError(io.ErrClosedPipe)
	<-exited
	if ctx.Err() == nil && b.granted(s) {
		lctx, cancel := context.WithTimeout(ctx, callTimeout)
		serial, err := b.serialOf(lctx, s.node)
		cancel()
		switch {
		case err != nil:
			b.streamLost(s, "PipeWire's graph cannot be followed any more ("+err.Error()+")")
		case serial != s.serial:
			b.streamLost(s, fmt.Sprintf("the shared stream's PipeWire node id %d now names another stream", s.node))
		}
	}
}

// pipewireEnv is the environment pw-dump needs to find the session's
// PipeWire.
func (b *Backend) pipewireEnv() map[string]string {
	env := map[string]string{}
	if b.cfg.RuntimeDir != "" {
		env["XDG_RUNTIME_DIR"] = b.cfg.RuntimeDir
	}
	return env
}

// capReader reads at most left bytes from r, then fails; the watch sets
// left before each value, so that no value of pw-dump's grows without
// bound.
type capReader struct {
	r    io.Reader
	left int
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("pw-dump wrote a value over %d bytes", maxWatchValue)
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= n
	return n, err
}

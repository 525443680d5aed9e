package mcpfront

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ipc"
)

// The front end's own requests to a daemon it started, named so that no
// client's id can be mistaken for them.
const (
	frontInitialize = "hostlink-front:initialize"
	frontDiscover   = "hostlink-front:server/discover"
	frontTools      = "hostlink-front:tools/list"
)

// message is what the front end reads of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func (m *message) request() bool { return m.Method != "" && len(m.ID) > 0 }

// is reports whether m answers the front end's own request id.
func (m *message) is(id string) bool {
	var s string
	return m.Method == "" && json.Unmarshal(m.ID, &s) == nil && s == id
}

// started is a daemon the front end started, with its MCP session open,
// or why there is none.
type started struct {
	conn net.Conn
	r    *bufio.Reader
	err  error
}

// starting is the start of a session whose daemon is still starting: the
// client's messages so far, what was answered from the catalogue, and what
// waits for the daemon.
type starting struct {
	catalogue *Catalogue
	out       io.Writer

	passthrough bool // the client started with neither initialize nor server/discover: forward it all
	// stateless: the client started with server/discover, the stateless
	// protocol's start (2026-07-28): no session to open, nothing to
	// replay, every request carrying its protocol version in _meta.
	stateless   bool
	startID     json.RawMessage // the client's initialize or server/discover
	startParams json.RawMessage
	protocol    string
	cached      *opening          // the catalogue's answers for protocol
	initialized bool              // the client's notifications/initialized, which the front end replaces with its own
	answered    bool              // the session's start was answered from the catalogue
	listed      bool              // and tools/list
	listIDs     []json.RawMessage // tools/list requests waiting for the daemon's list
	queue       [][]byte          // everything else, for the daemon, in order
}

// autoStart starts a daemon and serves the client through it, answering
// the start of the session from the catalogue while the daemon starts.
func (o Options) autoStart(ctx context.Context, hello ipc.MCPHello, stdin io.Reader, stdout io.Writer) error {
	ready := make(chan started, 1)
	go func() {
		console, err := o.Start.run(ctx)
		if err != nil {
			ready <- started{err: err}
			return
		}
		if console != "" {
			fmt.Fprintf(o.Stderr, "hostlink mcp: started a hostlink daemon in the background; it stops after %s without a client. Web console: %s\n", o.Start.IdleExit, console)
		}
		conn, r, err := ipc.OpenMCP(ctx, o.Addr, hello)
		ready <- started{conn: conn, r: r, err: err}
	}()
	return o.serveStarting(ctx, ready, hello, stdin, stdout)
}

// serveStarting serves the client through the daemon ready delivers,
// answering what it can from the catalogue until then.
func (o Options) serveStarting(ctx context.Context, ready <-chan started, hello ipc.MCPHello, stdin io.Reader, stdout io.Writer) error {
	s := &starting{catalogue: loadCatalogue(o.Catalogue, o.CatalogueKey), out: stdout}
	// The client is read through a pollable copy of stdin when it can be
	// handed to the daemon once that serves: the reads stop there without
	// losing a byte.
	in, out, passable := ipc.PassableStdio(stdin, stdout)
	var pollable *os.File
	handed := false
	if passable {
		if f, restore, err := ipc.PollableStdin(in); err == nil {
			pollable = f
			defer func() {
				if !handed {
					restore()
				}
			}()
			stdin = f
		}
	}
	client := readClient(stdin)
	// lines is nil once stdin ended: what the client sent still reaches
	// the daemon, and its answers the client.
	lines := client.lines
	var d started
	// Until the daemon serves, and until the client's first message says
	// whether this is a session start the front end knows.
	for d.conn == nil || (lines != nil && s.startID == nil && !s.passthrough) {
		select {
		case line, ok := <-lines:
			if !ok {
				lines = nil
				continue
			}
			if err := s.fromClient(line); err != nil {
				return err
			}
			client.next <- nil
		case d = <-ready:
			ready = nil
			if d.err != nil {
				return d.err
			}
		case <-ctx.Done():
			return nil
		}
	}
	conn := d.conn
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	handshake := !s.passthrough && s.startID != nil
	if handshake {
		keep := func(st *opening) {
			if err := keepOpening(o.Catalogue, o.CatalogueKey, s.catalogue, st); err != nil && o.Stderr != nil {
				fmt.Fprintf(o.Stderr, "hostlink mcp: keeping the daemon's catalogue for the next start: %v\n", err)
			}
		}
		if err := s.handshake(conn, d.r, keep); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	if lines != nil && pollable != nil {
		c, r, next := s.handOver(ctx, o.Addr, hello, client, pollable, in, out)
		if c != nil {
			// The daemon reads the client now and puts the description
			// back in blocking mode at the end. The front end's copy
			// goes: left open, every line the client writes would wake
			// this process for nothing.
			handed = true
			pollable.Close()
			conn.Close() // the front end's own session, done with
			return waitStdio(ctx, c, r)
		}
		client = next
	}
	for _, line := range s.queue {
		if _, err := conn.Write(line); err != nil {
			return sessionEnded(ctx, err)
		}
	}
	if lines == nil {
		closeWrite(conn)
		return sessionEnded(ctx, copyOut(stdout, d.r))
	}
	return handOff(ctx, conn, d.r, client, stdout, handshake && !s.stateless && !s.initialized)
}

// fromClient takes one of the client's messages before the daemon serves.
func (s *starting) fromClient(line []byte) error {
	var m message
	if s.passthrough || json.Unmarshal(line, &m) != nil {
		s.queue = append(s.queue, line)
		return nil
	}
	switch {
	case s.startID == nil && m.request() && (m.Method == "initialize" || m.Method == "server/discover"):
		s.startID, s.startParams = m.ID, m.Params
		s.stateless = m.Method == "server/discover"
		s.protocol = requestedProtocol(m.Params)
		s.cached = s.catalogue.openingFor(s.protocol)
		if s.cached != nil && s.cached.answer(s.stateless) != nil {
			s.answered = true
			return s.reply(m.ID, s.cached.answer(s.stateless))
		}
	case s.startID == nil:
		s.passthrough = true // not a session start the front end knows
		s.queue = append(s.queue, line)
	case m.Method == "notifications/initialized" && !s.stateless && !s.initialized:
		s.initialized = true
	case m.Method == "tools/list" && m.request() && firstPage(m.Params):
		if s.answered {
			s.listed = true
			return s.reply(m.ID, s.cached.Tools)
		}
		s.listIDs = append(s.listIDs, m.ID)
	default:
		s.queue = append(s.queue, line)
	}
	return nil
}

// requestedProtocol is the protocol version a session's start asks for:
// initialize's protocolVersion, or, in the stateless protocol, the one
// every request names in _meta.
func requestedProtocol(params json.RawMessage) string {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		Meta            struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	json.Unmarshal(params, &p)
	if p.ProtocolVersion != "" {
		return p.ProtocolVersion
	}
	return p.Meta.ProtocolVersion
}

// firstPage reports whether tools/list params ask for the first page.
func firstPage(params json.RawMessage) bool {
	var p struct {
		Cursor string `json:"cursor"`
	}
	return len(params) == 0 || (json.Unmarshal(params, &p) == nil && p.Cursor == "")
}

// handshake starts the daemon's session with the client's initialize
// params (or, stateless, asks server/discover with the client's), gives
// keep the daemon's answers, then answers what waited for the daemon's
// list and tells the client when the catalogue it was answered from is
// stale. The catalogue is kept before the client hears the list: a client
// that leaves at once, its front end killed with it, still leaves the
// catalogue for the next start.
func (s *starting) handshake(conn net.Conn, r *bufio.Reader, keep func(*opening)) error {
	id, method := frontInitialize, "initialize"
	if s.stateless {
		id, method = frontDiscover, "server/discover"
	}
	start, err := s.ask(conn, r, id, method, s.startParams)
	if err != nil {
		return err
	}
	if len(start.Error) > 0 {
		if !s.answered {
			s.replyError(s.startID, start.Error)
		}
		return errcode.New(errcode.Internal, "the daemon refused the MCP session: %s", start.Error)
	}
	if !s.answered {
		if err := s.reply(s.startID, start.Result); err != nil {
			return err
		}
	}
	// The stateless protocol's requests each carry the client's _meta
	// (protocol version, capabilities), as its server/discover did.
	var listParams json.RawMessage
	if s.stateless {
		listParams = s.startParams
	} else if _, err := io.WriteString(conn, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		return err
	}
	tools, err := s.ask(conn, r, frontTools, "tools/list", listParams)
	if err != nil {
		return err
	}
	if len(tools.Error) > 0 {
		for _, id := range s.listIDs {
			s.replyError(id, tools.Error)
		}
		return errcode.New(errcode.Internal, "the daemon did not list its tools: %s", tools.Error)
	}
	st := &opening{Protocol: s.protocol, Tools: compact(tools.Result)}
	if s.stateless {
		st.Discover = compact(start.Result)
	} else {
		st.Initialize = compact(start.Result)
	}
	keep(st)
	for _, id := range s.listIDs {
		if err := s.reply(id, tools.Result); err != nil {
			return err
		}
	}
	if s.listed && !bytes.Equal(st.Tools, compact(s.cached.Tools)) {
		if _, err := io.WriteString(s.out, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// ask sends the daemon one request of the front end's own and returns its
// answer; what else the daemon sends meanwhile goes to the client.
func (s *starting) ask(conn net.Conn, r *bufio.Reader, id, method string, params json.RawMessage) (*message, error) {
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	b, _ := json.Marshal(req)
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("the daemon's session: %w", err)
		}
		var m message
		if json.Unmarshal(line, &m) == nil && m.is(id) {
			return &m, nil
		}
		if _, err := s.out.Write(line); err != nil {
			return nil, err
		}
	}
}

func (s *starting) reply(id, result json.RawMessage) error {
	b, _ := json.Marshal(map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`), "id": id, "result": result})
	_, err := s.out.Write(append(b, '\n'))
	return err
}

func (s *starting) replyError(id, rpcErr json.RawMessage) {
	b, _ := json.Marshal(map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`), "id": id, "error": rpcErr})
	s.out.Write(append(b, '\n'))
}

func compact(b json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// handOver hands the client to the daemon (ipc.MCPHello.Resume) once the
// front end has answered the start of its session: the daemon replays the
// client's initialize, reads what the front end read and did not answer,
// then the client's own stdin, and writes to its stdout. The client's
// reads through pollable stop first. It returns the session's connection
// and reader; or, when the daemon does not take the client, a reader that
// goes on from where the reads stopped, for the copying front end.
func (s *starting) handOver(ctx context.Context, addr string, hello ipc.MCPHello, client *clientReader, pollable, in, out *os.File) (net.Conn, *bufio.Reader, *clientReader) {
	read := client.stop(pollable)
	resume := &ipc.Resume{Pending: bytes.Join(append(s.queue, read), nil)}
	if !s.passthrough && !s.stateless && s.startID != nil {
		resume.Initialize, resume.Initialized = s.startParams, s.initialized
	}
	hello.Resume = resume
	conn, r, passed, err := ipc.OpenMCPOnStdio(ctx, addr, hello, in, out)
	if err == nil && passed {
		return conn, r, nil
	}
	if conn != nil {
		conn.Close()
	}
	pollable.SetReadDeadline(time.Time{})
	return nil, nil, readClient(io.MultiReader(bytes.NewReader(read), pollable))
}

// clientReader reads the client's messages a line at a time for the start
// of the session, then copies the rest to the daemon as a byte stream.
type clientReader struct {
	lines chan []byte   // each line; closed at the end of stdin
	next  chan net.Conn // after each line: nil for the next line, or the daemon to copy the rest to
	rest  chan []byte   // once stopped: what was read and not sent as a line
}

func readClient(stdin io.Reader) *clientReader {
	c := &clientReader{lines: make(chan []byte), next: make(chan net.Conn), rest: make(chan []byte, 1)}
	go func() {
		br := bufio.NewReader(stdin)
		for {
			line, err := br.ReadBytes('\n')
			if errors.Is(err, os.ErrDeadlineExceeded) {
				// Stopped (stop): a read either returned its bytes or
				// read nothing, so nothing is lost.
				b, _ := br.Peek(br.Buffered())
				c.rest <- append(line, b...)
				return
			}
			if len(line) > 0 {
				c.lines <- line
				if conn := <-c.next; conn != nil {
					io.Copy(conn, br)
					// The client is done: the daemon ends the session
					// (see pipe).
					closeWrite(conn)
					return
				}
			}
			if err != nil {
				close(c.lines)
				return
			}
		}
	}()
	return c
}

// stop ends the reads of the client, whose stdin f is pollable, and
// returns, in order, what was read and not yet taken: lines the loop of
// serveStarting has not seen and the start of a line. At the end of stdin
// that is all there was.
func (c *clientReader) stop(f *os.File) []byte {
	f.SetReadDeadline(time.Now())
	var read []byte
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				return read
			}
			read = append(read, line...)
			c.next <- nil
		case rest := <-c.rest:
			return append(read, rest...)
		}
	}
}

// handOff copies the daemon's answers to stdout and, from the client's
// next line on, the client's stream to the daemon, until the daemon ends
// the session. With replaced, the front end opened the daemon's session
// itself and the client's notifications/initialized, when it comes, is
// not passed on (the daemon would log it as a duplicate).
func handOff(ctx context.Context, conn net.Conn, r *bufio.Reader, client *clientReader, stdout io.Writer, replaced bool) error {
	out := make(chan error, 1)
	go func() { out <- copyOut(stdout, r) }()
	for {
		select {
		case line, ok := <-client.lines:
			if !ok {
				closeWrite(conn)
				return sessionEnded(ctx, <-out)
			}
			var m message
			if replaced && json.Unmarshal(line, &m) == nil && m.Method == "notifications/initialized" {
				replaced = false
				client.next <- nil
				continue
			}
			if _, err := conn.Write(line); err != nil {
				return sessionEnded(ctx, err)
			}
			client.next <- conn
			return sessionEnded(ctx, <-out)
		case err := <-out:
			return sessionEnded(ctx, err)
		}
	}
}

// copyOut copies the daemon's answers to stdout until the session ends.
func copyOut(stdout io.Writer, r *bufio.Reader) error {
	_, err := io.Copy(stdout, r)
	return err
}

// sessionEnded is the error Run returns for how the daemon's session ended.
func sessionEnded(ctx context.Context, err error) error {
	if ctx.Err() != nil || err == nil || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return fmt.Errorf("the daemon's session: %w", err)
}

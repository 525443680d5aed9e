package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/version"
)

// NewServer returns an MCP server exposing every operation in reg. Calls are
// attributed to transport and peer in the audit log.
func NewServer(reg *ops.Registry, transport audit.Transport, peer string) *mcp.Server {
	return newServer(reg, transport, fixedPeer(peer), fixedSession(ops.NewSessionKey(transport)), nil)
}

// sessionFunc returns the session key of a call's MCP session (see
// ops.Caller.Session).
type sessionFunc func(*mcp.ServerSession) string

func fixedSession(key string) sessionFunc { return func(*mcp.ServerSession) string { return key } }

// peerFunc says who made a call, as the transport measured it.
type peerFunc func(*mcp.CallToolRequest) string

func fixedPeer(peer string) peerFunc { return func(*mcp.CallToolRequest) string { return peer } }

// newServer is NewServer whose calls are attributed to peer(req) and whose
// tool results, when enc is not nil, are encoded once by the handler and
// stored in enc for the connection (see encodedResults).
func newServer(reg *ops.Registry, transport audit.Transport, peer peerFunc, session sessionFunc, enc *encodedResults) *mcp.Server {
	return newServerFor(reg, transport, peer, session, false, enc)
}

// newServerFor is newServer whose callers are hostlink's own children
// when child is set (see ops.Caller.Child).
func newServerFor(reg *ops.Registry, transport audit.Transport, peer peerFunc, session sessionFunc, child bool, enc *encodedResults) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "hostlink", Title: "hostlink", Version: version.Version}, &mcp.ServerOptions{
		Instructions: "hostlink acts on this computer's files inside configured workdirs. " +
			"Call list_workdirs first; every path is relative to a workdir (or absolute inside one). " +
			"Errors carry a stable code such as PATH_OUTSIDE_ALLOWED_ROOT.",
	})
	for _, op := range reg.OpsFor(transport) {
		s.AddTool(tool(op), handler(reg, op.Name, transport, peer, session, child, enc))
	}
	s.AddReceivingMiddleware(disabledTools(reg, transport, peer, session, child))
	return s
}

// disabledTools answers a call of an operation whose capability is off
// (ops.Registry.Disable) through the registry, which audits it and says
// CAPABILITY_DISABLED with what enables it; the SDK alone would answer a
// bare "unknown tool". Such tools are not listed.
func disabledTools(reg *ops.Registry, transport audit.Transport, peer peerFunc, session sessionFunc, child bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil && reg.Disabled(transport, call.Params.Name) {
				return handler(reg, call.Params.Name, transport, peer, session, child, nil)(ctx, call)
			}
			return next(ctx, method, req)
		}
	}
}

// withClient names the session's client, as its initialize request
// declared it (clientInfo name and version), before the measured peer:
// "claude-code 2.1.197 (127.0.0.1:50628)". The name is the client's own
// claim, so it is shown beside the peer, never instead of it.
func withClient(ss *mcp.ServerSession, peer string) string {
	if ss == nil {
		return peer
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.ClientInfo == nil {
		return peer
	}
	name := printable(ip.ClientInfo.Name, 64)
	if name == "" {
		return peer
	}
	if v := printable(ip.ClientInfo.Version, 32); v != "" {
		name += " " + v
	}
	return name + " (" + peer + ")"
}

// printable is s without control characters, at most n runes.
func printable(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if n == 0 {
			break
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
			n--
		}
	}
	return strings.TrimSpace(b.String())
}

func tool(op *ops.Op) *mcp.Tool {
	destructive := op.Destructive
	closed := false
	t := &mcp.Tool{
		Name:        op.Name,
		Title:       op.Title,
		Description: op.Description,
		InputSchema: op.InputSchemaJSON(),
		Annotations: &mcp.ToolAnnotations{
			Title:           op.Title,
			ReadOnlyHint:    op.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  op.Idempotent,
			OpenWorldHint:   &closed,
		},
	}
	// A text-only result has no structured content over MCP.
	if op.Out == nil || !op.Out.Implements(textOnlyType) {
		t.OutputSchema = op.OutputSchemaJSON()
	}
	return t
}

// errorResult is the structured body of a failed call.
type errorResult struct {
	Error *errcode.Error `json:"error"`
}

func handler(reg *ops.Registry, name string, transport audit.Transport, peer peerFunc, session sessionFunc, child bool, enc *encodedResults) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var progress ops.ProgressFunc
		if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
			progress = func(done, total float64, msg string) {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Progress: done, Total: total, Message: msg,
				})
			}
		}
		caller := ops.Caller{Transport: transport, Peer: withClient(req.Session, peer(req)), Session: session(req.Session), Ask: askInClient(req.Session), Child: child}
		out, err := reg.Call(ctx, caller, name, req.Params.Arguments, progress)
		if err != nil {
			body, _ := json.Marshal(errorResult{errcode.As(err)})
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}, nil
		}
		r, merr := encodeResult(out)
		if merr != nil {
			return nil, merr
		}
		// Images go as image content beside the JSON, never inside it.
		var images []mcp.Content
		for _, im := range ops.ImagesOf(out) {
			images = append(images, &mcp.ImageContent{Data: im.Data, MIMEType: im.MIMEType})
		}
		// A cancelled call may get no response written, which would leave
		// its stored result behind until the session ends.
		if enc != nil && ctx.Err() == nil {
			return enc.result(r, images), nil
		}
		res := &mcp.CallToolResult{Content: append([]mcp.Content{&mcp.TextContent{Text: string(r.text)}}, images...)}
		if r.structured != nil {
			res.StructuredContent = json.RawMessage(r.structured)
		}
		return res, nil
	}
}

// A result is its JSON as structured content and, as MCP asks, the same
// JSON as its text block, unless it implements these:

// textAppender is a result with a text rendering of its own for clients
// that read the text block rather than the structured content (a
// listing's lines instead of the JSON string holding them). It must hold
// everything the structured content does, and be valid UTF-8.
type textAppender interface {
	AppendText(b []byte) []byte
}

// textOnly is a textAppender sent as its text block alone, with no
// structured content, and whose tool lists no output schema: read_file,
// whose content would otherwise cross the wire twice.
type textOnly interface {
	textAppender
	TextOnly()
}

var textOnlyType = reflect.TypeFor[textOnly]()

// encodeResult encodes a successful result's text and structured content.
func encodeResult(out any) (encoded, error) {
	if t, ok := out.(textOnly); ok {
		return encoded{text: t.AppendText(nil)}, nil
	}
	body, err := encodeJSON(out)
	if err != nil {
		return encoded{}, err
	}
	r := encoded{text: body, structured: body}
	if t, ok := out.(textAppender); ok {
		r.text = t.AppendText(nil)
	}
	return r, nil
}

// jsonAppender is implemented by results that encode themselves, with the
// same bytes as encodeJSON but faster (fileapi.ReadFileResult).
type jsonAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// encodeJSON encodes v like the SDK does (no HTML escaping).
func encodeJSON(v any) ([]byte, error) {
	if a, ok := v.(jsonAppender); ok {
		return a.AppendJSON(nil)
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Serve serves reg with newline-delimited JSON-RPC read from r and written
// to w (MCP's stdio transport) until the client disconnects or ctx is done.
// A line that is not one JSON-RPC message, or is over maxLine bytes, is
// answered with a JSON-RPC error and the session goes on (package
// jsonrpcline). Tool results are encoded once (see encodedResults).
// transport and peer are recorded in the audit log.
func Serve(ctx context.Context, reg *ops.Registry, transport audit.Transport, peer string, maxLine int, r io.ReadCloser, w io.WriteCloser) error {
	return ServeSession(ctx, reg, transport, peer, ops.NewSessionKey(transport), maxLine, r, w)
}

// ServeSession is Serve whose calls carry the session key session (see
// ops.Caller.Session): the caller ends the session's grants when it
// returns.
func ServeSession(ctx context.Context, reg *ops.Registry, transport audit.Transport, peer, session string, maxLine int, r io.ReadCloser, w io.WriteCloser) error {
	return ServeResumed(ctx, reg, Client{Transport: transport, Peer: peer, Session: session}, maxLine, nil, r, w)
}

// Client is the other end of a session, as its transport measured it.
type Client struct {
	Transport audit.Transport
	Peer      string
	Session   string // the session key (ops.Caller.Session)
	// Child: the client is a process hostlink started, or one of its
	// descendants (ops.Caller.Child).
	Child bool
}

// ServeResumed is ServeSession, for client, of a session whose start a
// front end has already answered (resumed; nil is ServeSession).
func ServeResumed(ctx context.Context, reg *ops.Registry, client Client, maxLine int, resumed *Resumed, r io.ReadCloser, w io.WriteCloser) error {
	enc := newEncodedResults()
	srv := newServerFor(reg, client.Transport, fixedPeer(client.Peer), fixedSession(client.Session), client.Child, enc)
	return srv.Run(ctx, enc.transport(r, w, maxLine, resumed))
}

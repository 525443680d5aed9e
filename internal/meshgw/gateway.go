package meshgw

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/textsafe"
	"github.com/hostlink/hostlink/internal/version"
)

// Options configure a gateway.
type Options struct {
	Client    *mesh.Client
	Directory *mesh.Directory
	// Timeout bounds one call (default 60 s): above an executor's
	// approval wait (20 s by default), below the usual MCP client's.
	Timeout time.Duration
	// Notices, if set, reads the approval notices machines publish, to
	// tell an agent where a pending approval is decided.
	Notices *Notices
}

// Fan-out bounds.
const (
	DefaultFanoutMachines = 100
	MaxFanoutMachines     = 1000
	fanoutConcurrency     = 32
	// fanoutDiscoveryAge is how old a discovery a fan-out reuses rather
	// than waiting for one of its own (list_machines always asks anew).
	fanoutDiscoveryAge = 5 * time.Second
)

// Gateway is the MCP face of the mesh.
type Gateway struct {
	o      Options
	ops    map[string]*ops.Op
	server *mcp.Server
}

// New returns a gateway listing the catalogue's operations.
func New(o Options) *Gateway {
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	g := &Gateway{o: o, ops: map[string]*ops.Op{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "hostlink-gateway", Title: "hostlink gateway", Version: version.Version}, &mcp.ServerOptions{
		Instructions: "hostlink's gateway acts on many computers, each under its own local policy. " +
			"Call list_machines first; every other tool takes the machine (its name or key) to act on. " +
			"fanout runs a read-only tool on every machine a label selector picks. Errors carry a stable code " +
			"such as EXECUTOR_OFFLINE or APPROVAL_PENDING (which says where the user decides).",
	})
	for _, op := range Catalogue() {
		g.ops[op.Name] = op
		s.AddTool(tool(op), g.callTool(op))
	}
	s.AddTool(listMachinesTool(), g.listMachines)
	s.AddTool(fanoutTool(g.readOnlyOps()), g.fanout)
	g.server = s
	return g
}

// Server is the gateway's MCP server.
func (g *Gateway) Server() *mcp.Server { return g.server }

func (g *Gateway) readOnlyOps() []string {
	var out []string
	for _, op := range Catalogue() {
		if op.ReadOnly {
			out = append(out, op.Name)
		}
	}
	return out
}

// tool is op's tool with the machine argument (and, for a mutation, the
// idempotency key) added to its input schema.
func tool(op *ops.Op) *mcp.Tool {
	t := *mcpserve.Tool(op)
	var schema map[string]any
	json.Unmarshal(op.InputSchemaJSON(), &schema)
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props["machine"] = map[string]any{"type": "string", "minLength": 1, "maxLength": 128,
		"description": "the machine to act on: its name or key, as list_machines shows them"}
	if !op.ReadOnly {
		props["idempotency_key"] = map[string]any{"type": "string", "maxLength": 128,
			"description": "a key of your choice for this change: resent with the same key after a timeout, the machine answers with the first outcome instead of acting twice"}
	}
	schema["properties"] = props
	req, _ := schema["required"].([]any)
	schema["required"] = append([]any{"machine"}, req...)
	b, _ := json.Marshal(schema)
	t.InputSchema = json.RawMessage(b)
	t.Description = op.Description + " (On the machine named by machine.)"
	return &t
}

// split takes the gateway's own arguments out of a call's arguments.
func split(raw json.RawMessage) (machine, idem string, rest []byte, err error) {
	var args map[string]json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", "", nil, errcode.New(errcode.InvalidArgument, "arguments are not a JSON object")
		}
	}
	if m, ok := args["machine"]; !ok || json.Unmarshal(m, &machine) != nil || machine == "" {
		return "", "", nil, errcode.New(errcode.InvalidArgument, "machine is required: a machine's name or key (list_machines)")
	}
	if k, ok := args["idempotency_key"]; ok {
		if json.Unmarshal(k, &idem) != nil || len(idem) > 128 {
			return "", "", nil, errcode.New(errcode.InvalidArgument, "idempotency_key must be a string of at most 128 bytes")
		}
	}
	delete(args, "machine")
	delete(args, "idempotency_key")
	rest, err = json.Marshal(args)
	return machine, idem, rest, err
}

func (g *Gateway) callTool(op *ops.Op) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		machine, idem, args, err := split(req.Params.Arguments)
		if err != nil {
			return mcpserve.ErrorResult(err), nil
		}
		res, err := g.call(forClient(ctx, req.Session), machine, op, args, idem)
		if err != nil {
			return mcpserve.ErrorResult(err), nil
		}
		out := reflect.New(op.Out)
		if err := json.Unmarshal(res, out.Interface()); err != nil {
			return mcpserve.ErrorResult(errcode.New(errcode.Internal, "the machine's result does not decode")), nil
		}
		return mcpserve.Result(out.Elem().Interface())
	}
}

// forClient names the MCP client of ss, as its initialize request
// declared it ("claude-code 2.1.197"), to the machines its calls reach.
func forClient(ctx context.Context, ss *mcp.ServerSession) context.Context {
	if ss == nil {
		return ctx
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.ClientInfo == nil || ip.ClientInfo.Name == "" {
		return ctx
	}
	name := ip.ClientInfo.Name
	if ip.ClientInfo.Version != "" {
		name += " " + ip.ClientInfo.Version
	}
	return mesh.ForClient(ctx, textsafe.Clip(name, 200))
}

// call runs op on the machine named nameOrKey.
func (g *Gateway) call(ctx context.Context, nameOrKey string, op *ops.Op, args []byte, idem string) (json.RawMessage, error) {
	key, err := g.o.Directory.Resolve(ctx, nameOrKey)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, g.o.Timeout)
	defer cancel()
	res, err := g.o.Client.Call(ctx, key, op.Name, args, idem)
	if err != nil && g.o.Notices != nil {
		err = g.o.Notices.Explain(ctx, key, err)
	}
	return res, err
}

type listMachinesArgs struct {
	Selector string `json:"selector,omitempty"`
}

func listMachinesTool() *mcp.Tool {
	f := false
	return &mcp.Tool{Name: "list_machines", Title: "List machines",
		Description: "The machines of the fleet: name, key, labels, OS, architecture, whether online now, the policy classes and capabilities each offers over the mesh. selector (key=value[,key=value]) keeps those with every label.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"selector":{"type":"string","maxLength":1024,"description":"label selector: key=value[,key=value]"}},"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{Title: "List machines", ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &f, OpenWorldHint: &f}}
}

func (g *Gateway) listMachines(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a listMachinesArgs
	if len(req.Params.Arguments) > 0 && json.Unmarshal(req.Params.Arguments, &a) != nil {
		return mcpserve.ErrorResult(errcode.New(errcode.InvalidArgument, "arguments are not a JSON object")), nil
	}
	sel, err := mesh.ParseSelector(a.Selector)
	if err != nil {
		return mcpserve.ErrorResult(err), nil
	}
	all, err := g.o.Directory.List(ctx)
	if err != nil {
		return mcpserve.ErrorResult(err), nil
	}
	out := struct {
		Machines []mesh.Discovered `json:"machines"`
	}{Machines: []mesh.Discovered{}}
	for _, m := range all {
		if m.Matches(sel) {
			out.Machines = append(out.Machines, m)
		}
	}
	return mcpserve.Result(out)
}

type fanoutArgs struct {
	Op             string          `json:"op"`
	Args           json.RawMessage `json:"args,omitempty"`
	Selector       string          `json:"selector,omitempty"`
	Machines       []string        `json:"machines,omitempty"`
	MaxMachines    int             `json:"max_machines,omitempty"`
	TimeoutSeconds int             `json:"timeout_seconds,omitempty"`
}

// FanoutResult is one machine's part of a fan-out.
type FanoutResult struct {
	Machine string          `json:"machine"`
	Name    string          `json:"name"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *errcode.Error  `json:"error,omitempty"`
}

// FanoutReply is a fan-out's result: every machine's, in name order.
type FanoutReply struct {
	Op      string         `json:"op"`
	Matched int            `json:"matched"` // machines the selector picked
	OK      int            `json:"ok"`
	Failed  int            `json:"failed"`
	Results []FanoutResult `json:"results"`
	// Truncated: more machines matched than max_machines; the first ones
	// by name were asked.
	Truncated bool `json:"truncated,omitempty"`
}

func fanoutTool(readOnly []string) *mcp.Tool {
	f := false
	enum, _ := json.Marshal(readOnly)
	schema := `{"type":"object","required":["op"],"additionalProperties":false,"properties":{` +
		`"op":{"type":"string","enum":` + string(enum) + `,"description":"a read-only tool to run on each machine"},` +
		`"args":{"type":"object","description":"the tool's arguments, the same for every machine (no machine)"},` +
		`"selector":{"type":"string","maxLength":1024,"description":"label selector key=value[,key=value]; empty: every online machine"},` +
		`"machines":{"type":"array","items":{"type":"string"},"maxItems":1000,"description":"names or keys instead of a selector"},` +
		`"max_machines":{"type":"integer","minimum":1,"maximum":1000,"description":"at most this many machines (default 100)"},` +
		`"timeout_seconds":{"type":"integer","minimum":1,"maximum":120,"description":"per machine (default 30)"}}}`
	return &mcp.Tool{Name: "fanout", Title: "Run on many machines",
		Description: "Run one read-only tool on every online machine a label selector (or a list) picks, at most max_machines, concurrently. Each machine answers under its own policy; the result has each machine's result or error, never one failure for all.",
		InputSchema: json.RawMessage(schema),
		Annotations: &mcp.ToolAnnotations{Title: "Run on many machines", ReadOnlyHint: true, DestructiveHint: &f, OpenWorldHint: &f}}
}

func (g *Gateway) fanout(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a fanoutArgs
	if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
		return mcpserve.ErrorResult(errcode.New(errcode.InvalidArgument, "arguments do not decode: %v", err)), nil
	}
	reply, err := g.Fanout(forClient(ctx, req.Session), a)
	if err != nil {
		return mcpserve.ErrorResult(err), nil
	}
	return mcpserve.Result(reply)
}

// Fanout runs a read-only operation on the machines a picks.
func (g *Gateway) Fanout(ctx context.Context, a fanoutArgs) (FanoutReply, error) {
	op, ok := g.ops[a.Op]
	if !ok || !op.ReadOnly {
		return FanoutReply{}, errcode.New(errcode.InvalidArgument, "fanout runs read-only tools only; %q is not one", a.Op)
	}
	max := a.MaxMachines
	if max == 0 {
		max = DefaultFanoutMachines
	}
	if max < 1 || max > MaxFanoutMachines {
		return FanoutReply{}, errcode.New(errcode.InvalidArgument, "max_machines must be 1 to %d", MaxFanoutMachines)
	}
	timeout := time.Duration(a.TimeoutSeconds) * time.Second
	if a.TimeoutSeconds == 0 {
		timeout = 30 * time.Second
	}
	if timeout < time.Second || timeout > 2*time.Minute {
		return FanoutReply{}, errcode.New(errcode.InvalidArgument, "timeout_seconds must be 1 to 120")
	}
	args := []byte(a.Args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	sel, err := mesh.ParseSelector(a.Selector)
	if err != nil {
		return FanoutReply{}, err
	}
	all, err := g.o.Directory.Recent(ctx, fanoutDiscoveryAge)
	if err != nil {
		return FanoutReply{}, err
	}
	var picked []mesh.Discovered
	if len(a.Machines) > 0 {
		want := map[string]bool{}
		for _, m := range a.Machines {
			want[m] = true
		}
		for _, m := range all {
			if want[m.Key] || want[m.Name] {
				picked = append(picked, m)
			}
		}
	} else {
		for _, m := range all {
			if m.Online && m.Matches(sel) {
				picked = append(picked, m)
			}
		}
	}
	reply := FanoutReply{Op: a.Op, Matched: len(picked), Results: []FanoutResult{}}
	if len(picked) > max {
		picked, reply.Truncated = picked[:max], true
	}
	reply.Results = make([]FanoutResult, len(picked))
	sem := make(chan struct{}, fanoutConcurrency)
	var wg sync.WaitGroup
	for i, m := range picked {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			r := FanoutResult{Machine: m.Key, Name: m.Name}
			res, err := g.o.Client.Call(cctx, m.Key, op.Name, args, "")
			if err != nil {
				r.Error = errcode.As(err)
			} else {
				r.Result = res
			}
			reply.Results[i] = r
		}()
	}
	wg.Wait()
	for _, r := range reply.Results {
		if r.Error != nil {
			reply.Failed++
		} else {
			reply.OK++
		}
	}
	return reply, nil
}

package meshgw_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/meshgw"
	"github.com/hostlink/hostlink/internal/meshhub/hubtest"
	"github.com/hostlink/hostlink/internal/policy"
)

// executor starts a daemon of its own serving the mesh as name.
func executor(t *testing.T, h *hubtest.Hub, caller string, name string, labels map[string]string, classes []policy.Class) *mesh.Executor {
	t.Helper()
	d, home := daemontest.Open(t, daemontest.Config{Workdirs: []string{"w"}}, daemon.Options{})
	os.WriteFile(filepath.Join(home, "w", "f.txt"), []byte("needle in "+name+"\n"), 0o644)
	ex, err := mesh.StartExecutor(mesh.ExecutorOptions{
		Dial:     mesh.Dial{Servers: h.URLs(), Creds: h.Machine(t, name)},
		Machine:  mesh.Machine{Name: name, Labels: labels},
		Registry: d.Registry, Classes: classes,
		Callers: func() map[string]mesh.Caller { return map[string]mesh.Caller{caller: {Name: "gateway", Key: caller}} },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ex.Close)
	return ex
}

func session(t *testing.T, g *meshgw.Gateway) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out)
	return out, res.IsError
}

// TestGateway: the gateway lists each operation once with a required
// machine, lists the machines (one gone is listed offline), calls one by
// name, and a fan-out answers per machine: results, a machine's own
// refusal and an offline machine side by side.
func TestGateway(t *testing.T) {
	h := hubtest.Start(t)
	gwCreds := h.Caller(t, "gateway", nil)
	gwKey := hubtest.Key(gwCreds)
	executor(t, h, gwKey, "a1", map[string]string{"team": "a"}, []policy.Class{policy.FilesRead})
	executor(t, h, gwKey, "a2", map[string]string{"team": "a"}, []policy.Class{})
	gone := executor(t, h, gwKey, "b1", map[string]string{"team": "b"}, []policy.Class{policy.FilesRead})
	c, err := mesh.NewClient(mesh.Dial{Servers: h.URLs(), Creds: gwCreds})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g := meshgw.New(meshgw.Options{Client: c, Directory: &mesh.Directory{Client: c, Wait: 300 * time.Millisecond}})
	cs := session(t, g)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		if names[tool.Name] {
			t.Errorf("%s listed twice", tool.Name)
		}
		names[tool.Name] = true
		if tool.Name == "list_machines" || tool.Name == "fanout" {
			continue
		}
		var schema struct {
			Required   []string       `json:"required"`
			Properties map[string]any `json:"properties"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		json.Unmarshal(b, &schema)
		if !slices.Contains(schema.Required, "machine") {
			t.Errorf("%s does not require machine", tool.Name)
		}
		if _, ok := schema.Properties["idempotency_key"]; ok == tool.Annotations.ReadOnlyHint {
			t.Errorf("%s: idempotency_key offered %v, read-only %v", tool.Name, ok, tool.Annotations.ReadOnlyHint)
		}
	}
	for _, want := range []string{"read_file", "write_file", "run_command", "list_machines", "fanout"} {
		if !names[want] {
			t.Errorf("%s not listed", want)
		}
	}

	out, _ := call(t, cs, "list_machines", map[string]any{})
	if n := len(out["machines"].([]any)); n != 3 {
		t.Fatalf("%d machines listed: %v", n, out)
	}
	gone.Close()
	out, _ = call(t, cs, "list_machines", map[string]any{"selector": "team=b"})
	ms := out["machines"].([]any)
	if len(ms) != 1 || ms[0].(map[string]any)["online"] != false {
		t.Fatalf("b1 after it stopped: %v", ms)
	}
	if out, isErr := call(t, cs, "hash_file", map[string]any{"machine": "a1", "path": "f.txt"}); isErr || out["sha256"] == "" {
		t.Fatalf("hash_file on a1: %v", out)
	}
	out, isErr := call(t, cs, "hash_file", map[string]any{"machine": "b1", "path": "f.txt"})
	if !isErr || out["error"].(map[string]any)["code"] != string(mesh.CodeExecutorOffline) {
		t.Fatalf("hash_file on b1: %v", out)
	}
	out, isErr = call(t, cs, "hash_file", map[string]any{"machine": "nobody", "path": "f.txt"})
	if !isErr || out["error"].(map[string]any)["code"] != string(mesh.CodeUnknownMachine) {
		t.Fatalf("hash_file on nobody: %v", out)
	}
	out, isErr = call(t, cs, "hash_file", map[string]any{"path": "f.txt"})
	if !isErr || out["error"].(map[string]any)["code"] != "INVALID_ARGUMENT" {
		t.Fatalf("hash_file on no machine: %v", out)
	}

	out, isErr = call(t, cs, "fanout", map[string]any{"op": "search_text", "args": map[string]any{"query": "needle"}, "machines": []string{"a1", "a2", "b1"}})
	if isErr {
		t.Fatalf("fanout: %v", out)
	}
	got := map[string]string{}
	for _, r := range out["results"].([]any) {
		r := r.(map[string]any)
		if e, ok := r["error"].(map[string]any); ok {
			got[r["name"].(string)] = e["code"].(string)
		} else {
			got[r["name"].(string)] = "OK"
		}
	}
	want := map[string]string{"a1": "OK", "a2": string(policy.CodeClassNotOffered), "b1": string(mesh.CodeExecutorOffline)}
	if len(got) != 3 || got["a1"] != want["a1"] || got["a2"] != want["a2"] || got["b1"] != want["b1"] || out["ok"] != float64(1) || out["failed"] != float64(2) {
		t.Fatalf("fanout: %v, want %v", out, want)
	}
	// Bounded, and read-only operations only.
	out, isErr = call(t, cs, "fanout", map[string]any{"op": "search_text", "args": map[string]any{"query": "needle"}, "selector": "team=a", "max_machines": 1})
	if isErr || out["matched"] != float64(2) || len(out["results"].([]any)) != 1 || out["truncated"] != true {
		t.Fatalf("fanout over max_machines: %v", out)
	}
	if _, isErr = call(t, cs, "fanout", map[string]any{"op": "write_file", "args": map[string]any{"path": "x", "content": "y"}}); !isErr {
		t.Fatal("fanout ran a write")
	}
}

package daemon

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/credstore"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/devplatform/devplatformtest"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/link"
	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/meshhub/hubtest"
	"github.com/hostlink/hostlink/internal/policy"
)

// TestOperationOnEveryTransport: an operation is listed, runs, is policed
// and is audited the same way whichever transport calls it: MCP on stdio
// and on HTTP, the control channel, the platform link (OPERATION_CALL on
// a session's data connection) and the mesh (a caller the machine trusts,
// through a hub, to the executor StartMesh runs). hash_file is the operation added as
// one file (files/hash.go) with no edit here or in the link.
func TestOperationOnEveryTransport(t *testing.T) {
	home := t.TempDir()
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	t.Setenv("HOSTLINK_HOME", home)
	w := filepath.Join(home, "w")
	os.MkdirAll(w, 0o755)
	os.WriteFile(filepath.Join(w, "f.txt"), []byte("the same everywhere\n"), 0o600)
	cfg := filepath.Join(home, "c.toml")
	os.WriteFile(cfg, []byte("[server]\nlisten = \"127.0.0.1:0\"\n[[workdirs]]\nalias = \"w\"\npath = '"+w+"'\n"), 0o600)
	d, err := Open(Options{ConfigPath: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// MCP on HTTP and the control channel, as serve runs them.
	ready := make(chan net.Addr, 1)
	served := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() { served <- d.ServeHTTP(sctx, func(a net.Addr) { ready <- a }) }()
	defer func() { stop(); <-served }()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-served:
		t.Fatal(err)
	}
	tok, _ := Token(d.Dirs)
	httpSess, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: "http://" + addr.String() + "/mcp", HTTPClient: &http.Client{Transport: bearer(tok)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer httpSess.Close()
	// MCP on stdio's server, over an in-memory pipe.
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserve.NewServer(d.Registry, audit.MCPStdio, "parent pid 1").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	stdioSess, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stdioSess.Close()
	ipcAddr, _ := ipc.Address(d.Dirs.Runtime)
	ipcClient, err := ipc.Connect(ctx, ipcAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer ipcClient.Close()
	// The link: a legacy session on the first workdir, against the
	// development platform.
	ptok := devplatform.NewToken()
	plat := devplatform.New(ptok, devplatform.Config{})
	platURL := devplatformtest.Serve(t, plat)
	lo, err := d.LinkOptions(LinkOptions{URL: platURL, Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	lo.Token = ptok
	svc, err := link.New(lo)
	if err != nil {
		t.Fatal(err)
	}
	lctx, stopLink := context.WithCancel(ctx)
	linked := make(chan error, 1)
	go func() { linked <- svc.Run(lctx) }()
	defer func() { stopLink(); <-linked }()
	peer, err := plat.WaitPeer(ctx, "s1", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// The mesh: this machine enrolled with a hub, trusting one caller.
	meshCaller := enrolInMesh(t, d)
	stopMesh, err := d.StartMesh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stopMesh()

	// Each transport's hash_file, as its result's sha256 or its error code.
	args := map[string]any{"path": "f.txt"}
	mcpCall := func(s *mcp.ClientSession) (string, string) {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "hash_file", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			SHA256 string         `json:"sha256"`
			Error  *errcode.Error `json:"error"`
		}
		json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out)
		if out.Error != nil {
			return "", string(out.Error.Code)
		}
		return out.SHA256, ""
	}
	calls := map[audit.Transport]func() (string, string){
		audit.MCPStdio: func() (string, string) { return mcpCall(stdioSess) },
		audit.MCPHTTP:  func() (string, string) { return mcpCall(httpSess) },
		audit.IPC: func() (string, string) {
			raw, _ := json.Marshal(args)
			res, err := ipcClient.Call(ctx, "hash_file", raw)
			if err != nil {
				return "", string(errcode.CodeOf(err))
			}
			var out struct {
				SHA256 string `json:"sha256"`
			}
			json.Unmarshal(res, &out)
			return out.SHA256, ""
		},
		audit.Mesh: func() (string, string) {
			raw, _ := json.Marshal(args)
			res, err := meshCaller.client.Call(ctx, meshCaller.machine, "hash_file", raw, "")
			if err != nil {
				return "", string(errcode.CodeOf(err))
			}
			var out struct {
				SHA256 string `json:"sha256"`
			}
			json.Unmarshal(res, &out)
			return out.SHA256, ""
		},
		audit.Link: func() (string, string) {
			e, err := peer.Request(ctx, "OPERATION_CALL", "", map[string]any{"op": "hash_file", "args": args})
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Code   string `json:"code"`
				Result struct {
					SHA256 string `json:"sha256"`
				} `json:"result"`
			}
			json.Unmarshal(e.Payload, &out)
			return out.Result.SHA256, out.Code
		},
	}

	// Listed on both MCP transports.
	for name, s := range map[string]*mcp.ClientSession{"stdio": stdioSess, "http": httpSess} {
		tools, err := s.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tool := range tools.Tools {
			found = found || (tool.Name == "hash_file" && tool.Annotations.ReadOnlyHint)
		}
		if !found {
			t.Errorf("MCP %s does not list hash_file", name)
		}
	}
	// The same result everywhere.
	var want string
	for tr, call := range calls {
		sum, code := call()
		if code != "" || sum == "" || (want != "" && sum != want) {
			t.Errorf("%s: sha256 %q, code %q (others %q)", tr, sum, code, want)
		}
		want = sum
	}
	// Policed the same everywhere.
	cfgDeny := policy.Defaults()
	cfgDeny.Default.Modes[policy.FilesRead] = policy.Deny
	d.pol.engine.Set(cfgDeny)
	for tr, call := range calls {
		if _, code := call(); code != string(policy.CodeDenied) {
			t.Errorf("%s under files_read = deny: %q", tr, code)
		}
	}
	// Audited the same everywhere: one record per call, with its
	// transport and outcome.
	lines, err := audit.Tail(d.Dirs.Audit, 200)
	if err != nil {
		t.Fatal(err)
	}
	got := map[audit.Transport][]string{}
	for _, l := range lines {
		if l.Op == "hash_file" {
			got[l.Transport] = append(got[l.Transport], l.Code)
		}
	}
	for tr := range calls {
		if c := got[tr]; len(c) != 2 || c[0] != "OK" || c[1] != string(policy.CodeDenied) || len(lines) == 0 {
			t.Errorf("%s: hash_file audited as %v, want [OK POLICY_DENIED]", tr, c)
		}
	}
}

// meshCaller is a caller on a one-node hub that the daemon's machine
// trusts, and the machine's key.
type meshCaller struct {
	client  *mesh.Client
	machine string
}

// enrolInMesh enrols d's machine with a fresh hub as `hostlink mesh join`
// would (the seed in the credential store, the enrolment in the state
// directory, trusting one caller) and turns [mesh] on.
func enrolInMesh(t *testing.T, d *Daemon) meshCaller {
	t.Helper()
	t.Setenv(credstore.BackendEnv, string(credstore.EncryptedFile))
	t.Setenv(credstore.PassphraseEnv, "test passphrase")
	h := hubtest.Start(t)
	creds := h.Machine(t, "here")
	caller := h.Caller(t, "gateway", nil)
	st, err := credstore.Open(credstore.Options{StateDir: d.Dirs.State})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Set(context.Background(), mesh.SeedName, creds.Seed); err != nil {
		t.Fatal(err)
	}
	enr := &mesh.Enrolment{Key: hubtest.Key(creds), Name: "here", Servers: h.URLs(), JWT: creds.JWT,
		Callers: []mesh.Caller{{Name: "gateway", Key: hubtest.Key(caller)}}}
	if err := enr.Save(d.Dirs.State); err != nil {
		t.Fatal(err)
	}
	d.Config.Mesh.Enabled = true
	c, err := mesh.NewClient(mesh.Dial{Servers: h.URLs(), Creds: caller})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return meshCaller{client: c, machine: enr.Key}
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/hostlink/hostlink/internal/credstore"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/meshgw"
	"github.com/hostlink/hostlink/internal/meshhub"
	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/textsafe"
)

type hubCmd struct {
	Serve  hubServeCmd  `cmd:"" help:"Run the hub: a NATS server (JetStream) for the mesh, the gateway (MCP for the whole fleet) and enrolment."`
	Enrol  hubEnrolCmd  `cmd:"" help:"Make a one-time code that enrols one machine (hostlink mesh join on it)."`
	Token  hubTokenCmd  `cmd:"" help:"Print the hub's bearer token (for the gateway's MCP endpoint)."`
	Caller hubCallerCmd `cmd:"" help:"Issue a caller's credentials (a tool of yours), scoped to some machines or all."`
	MCP    hubMCPCmd    `cmd:"" name:"mcp" help:"Serve the gateway's MCP on stdin/stdout, through the running hub's bus."`
	Audit  hubAuditCmd  `cmd:"" help:"Read the fleet's aggregated audit (machines with [mesh] export_audit), or --verify that each machine's copy is complete."`
}

// hubDir is the hub's state directory.
func hubDir() (string, error) {
	dirs, err := paths.Resolve()
	if err != nil {
		return "", err
	}
	return filepath.Join(dirs.State, "hub"), nil
}

// gatewaySeed is the gateway's caller key in the credential store, made
// on the first start, so that machines trust one key across restarts.
const gatewaySeed = "mesh-gateway"

func hubKeys(ctx context.Context) (meshhub.Keys, nkeys.KeyPair, error) {
	st, err := credentialStore()
	if err != nil {
		return meshhub.Keys{}, nil, err
	}
	keys, err := meshhub.LoadKeys(ctx, st)
	if err != nil {
		return keys, nil, err
	}
	seed, err := st.Get(ctx, gatewaySeed)
	if errors.Is(err, credstore.ErrNotFound) {
		kp, _ := nkeys.CreateUser()
		seed, _ = kp.Seed()
		err = st.Set(ctx, gatewaySeed, seed)
	}
	if err != nil {
		return keys, nil, err
	}
	gw, err := nkeys.FromSeed(seed)
	return keys, gw, err
}

type hubServeCmd struct {
	Listen    string   `help:"The bus's client address (NATS)." default:"127.0.0.1:7721"`
	HTTP      string   `help:"The gateway's and enrolment's HTTP address." default:"127.0.0.1:7720"`
	TLSCert   string   `help:"PEM certificate for the bus and HTTP (required beyond loopback)." type:"path"`
	TLSKey    string   `help:"PEM key of --tls-cert." type:"path"`
	Servers   []string `help:"Use this existing NATS bus (it must trust the hub's operator) instead of embedding one." sep:","`
	Advertise []string `help:"The bus URLs machines are told to dial (default: the bus's own)." sep:","`
	Cluster   string   `help:"This node's route address, to cluster with --routes (three nodes keep working with one down)."`
	Routes    []string `help:"The other nodes' route URLs (nats://host:port)." sep:","`
	Leaf      string   `help:"Accept leaf nodes (sites that dial in) on this address."`
	Replicas  int      `help:"Replicas of the hub's streams (3 in a cluster of three)." default:"1"`
	Name      string   `help:"This node's server name (unique in a cluster)." default:"hub"`
}

func (h *hubServeCmd) Run(ctx context.Context) error {
	dir, err := hubDir()
	if err != nil {
		return err
	}
	keys, gw, err := hubKeys(ctx)
	if err != nil {
		return err
	}
	// The encrypted credential file's key derivation used 64 MiB the
	// runtime would otherwise hold while the hub runs.
	debug.FreeOSMemory()
	tok, err := meshhub.Token(dir)
	if err != nil {
		return err
	}
	var tlsConf *tls.Config
	if h.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(h.TLSCert, h.TLSKey)
		if err != nil {
			return fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	o := meshhub.HubOptions{Keys: keys, Gateway: gw, Dir: dir, HTTPListen: h.HTTP, TLS: tlsConf, Token: tok, Replicas: h.Replicas, Servers: h.Servers}
	if len(h.Servers) == 0 {
		node := &meshhub.Node{Name: h.Name, Listen: h.Listen, StoreDir: filepath.Join(dir, "jetstream"), TLS: tlsConf, LeafListen: h.Leaf}
		if h.Cluster != "" {
			node.Cluster.Name, node.Cluster.Listen = "hostlink", h.Cluster
			for _, r := range h.Routes {
				u, err := url.Parse(r)
				if err != nil {
					return fmt.Errorf("--routes %q: %w", r, err)
				}
				node.Cluster.Routes = append(node.Cluster.Routes, u)
			}
		}
		o.Node = node
	}
	hub, err := meshhub.StartHub(ctx, o)
	if err != nil {
		return err
	}
	defer hub.Close()
	if len(h.Advertise) > 0 {
		hub.Enroller.Servers = h.Advertise
	}
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	base := scheme + "://" + hub.Addr().String()
	if err := meshhub.WriteRunning(dir, meshhub.Running{HTTP: base, Servers: hub.Servers(), PID: os.Getpid()}); err != nil {
		return err
	}
	gwKey, _ := gw.PublicKey()
	fmt.Fprintf(os.Stderr, "hostlink hub serving\n  bus: %s\n  gateway MCP: %s/mcp (bearer token: `hostlink hub token`)\n  gateway caller key: %s\n  enrol a machine: `hostlink hub enrol NAME`, then on it `hostlink mesh join %s CODE`\n",
		strings.Join(hub.Servers(), ","), base, gwKey, base)
	return hub.Serve(ctx)
}

type hubEnrolCmd struct {
	Name   string            `arg:"" help:"The machine's name in the fleet."`
	Labels map[string]string `help:"Labels for selectors: key=value;key2=value2." mapsep:";"`
}

func (e *hubEnrolCmd) Run(ctx context.Context) error {
	dir, err := hubDir()
	if err != nil {
		return err
	}
	run, err := meshhub.ReadRunning(dir)
	if err != nil {
		return err
	}
	tok, err := meshhub.Token(dir)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(meshhub.CodeRequest{Name: e.Name, Labels: e.Labels})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, run.HTTP+meshhub.CodesPath, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("the hub at %s did not answer (is `hostlink hub serve` running?): %w", run.HTTP, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the hub refused: %s", strings.TrimSpace(string(b)))
	}
	var c meshhub.CodeReply
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	fmt.Printf("On the machine %q, within %s (once):\n\n  hostlink mesh join %s %s\n", e.Name, time.Until(c.Expires).Round(time.Minute), run.HTTP, c.Code)
	return nil
}

type hubTokenCmd struct{}

func (hubTokenCmd) Run() error {
	dir, err := hubDir()
	if err != nil {
		return err
	}
	tok, err := meshhub.Token(dir)
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}

type hubCallerCmd struct {
	Name     string            `arg:"" help:"The caller's name (machines show it in their audit records)."`
	Machines []string          `help:"Only these machines (names or keys, as enrolled)." sep:","`
	Labels   map[string]string `help:"Only the machines enrolled with these labels (key=value;...), as of now." mapsep:";"`
	Creds    string            `help:"Write the credentials (JWT and seed) to this file, privately." required:"" type:"path"`
}

func (c *hubCallerCmd) Run(ctx context.Context) error {
	dir, err := hubDir()
	if err != nil {
		return err
	}
	keys, _, err := hubKeys(ctx)
	if err != nil {
		return err
	}
	var machines []string
	if len(c.Machines) > 0 || len(c.Labels) > 0 {
		all, err := meshhub.LoadEnrolled(dir)
		if err != nil {
			return err
		}
		machines = meshhub.Select(all, c.Machines, c.Labels)
		if len(machines) == 0 {
			return errors.New("no enrolled machine matches")
		}
	}
	_, seed, key := meshhub.NewUser()
	jwt, err := keys.Caller(key, c.Name, machines)
	if err != nil {
		return err
	}
	if err := meshhub.WriteCreds(c.Creds, jwt, seed); err != nil {
		return err
	}
	scope := "every machine"
	if machines != nil {
		scope = fmt.Sprintf("%d machines", len(machines))
	}
	fmt.Printf("Caller %q, key %s, may call %s on the bus. Each machine runs its requests only once its user trusts the key:\n\n  hostlink mesh trust %s %s\n", c.Name, key, scope, c.Name, key)
	return nil
}

type hubMCPCmd struct{}

func (hubMCPCmd) Run(ctx context.Context) error {
	dir, err := hubDir()
	if err != nil {
		return err
	}
	run, err := meshhub.ReadRunning(dir)
	if err != nil {
		return err
	}
	keys, gw, err := hubKeys(ctx)
	if err != nil {
		return err
	}
	return meshhub.ServeStdio(ctx, keys, gw, run.Servers, os.Stdin, os.Stdout)
}

type hubAuditCmd struct {
	Machine string `help:"Only this machine (name or key)."`
	Client  string `help:"Only records whose caller contains this text."`
	Class   string `help:"Only operations of this policy class."`
	Op      string `help:"Only this operation."`
	N       int    `short:"n" help:"The last N records (0: all)." default:"50"`
	Verify  bool   `help:"Instead of records, show per machine whether the copy is complete (linked records up to a checkpoint the machine signed)."`
	JSON    bool   `help:"Print JSON."`
}

// Run reads the aggregated audit from the running hub's stream.
func (a *hubAuditCmd) Run(ctx context.Context) error {
	dir, err := hubDir()
	if err != nil {
		return err
	}
	run, err := meshhub.ReadRunning(dir)
	if err != nil {
		return err
	}
	keys, _, err := hubKeys(ctx)
	if err != nil {
		return err
	}
	enrolled, err := meshhub.LoadEnrolled(dir)
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, m := range enrolled {
		names[m.Key] = m.Name
	}
	key := a.Machine
	if key != "" && !mesh.ValidMachine(key) {
		if ks := meshhub.Select(enrolled, []string{key}, nil); len(ks) == 1 {
			key = ks[0]
		} else {
			return fmt.Errorf("%d enrolled machines are named %q", len(ks), key)
		}
	}
	js, closeJS, err := meshhub.AdminJetStream(keys, run.Servers)
	if err != nil {
		return err
	}
	defer closeJS()
	entries, err := meshhub.ReadAudit(ctx, js, key)
	if err != nil {
		return err
	}
	if a.Verify {
		vs := meshhub.Verify(entries)
		if a.JSON {
			return printJSON(vs)
		}
		bad := 0
		for _, v := range vs {
			state := "complete"
			if !v.Complete {
				state, bad = "NOT PROVEN", bad+1
			}
			fmt.Printf("%-12s %s records %d..%d (%d), signed through %d: %s\n", names[v.Machine], v.Machine, v.First, v.Last, v.Records, v.Proven, state)
			for _, b := range v.Breaks {
				fmt.Printf("    %s\n", textsafe.Line(b))
			}
		}
		if bad > 0 {
			return fmt.Errorf("%d machines' copies are not proven complete", bad)
		}
		return nil
	}
	classes := map[string]string{}
	for _, op := range meshgw.Catalogue() {
		classes[op.Name] = string(op.Class)
	}
	var out []meshhub.AuditEntry
	for _, e := range entries {
		r := e.Record
		if r == nil || (a.Op != "" && r.Op != a.Op) || (a.Client != "" && !strings.Contains(r.Peer, a.Client)) ||
			(a.Class != "" && classes[r.Op] != a.Class) {
			continue
		}
		out = append(out, e)
	}
	if a.N > 0 && len(out) > a.N {
		out = out[len(out)-a.N:]
	}
	if a.JSON {
		var lines []any
		for _, e := range out {
			lines = append(lines, map[string]any{"machine": e.Machine, "name": names[e.Machine], "record": e.Record})
		}
		return printJSON(lines)
	}
	for _, e := range out {
		r := e.Record
		fmt.Printf("%-10s %6d %s %-10s %-22s %-26s %s %s\n", textsafe.Line(names[e.Machine]), r.Seq, r.Time.Local().Format("2006-01-02 15:04:05"),
			r.Transport, textsafe.Line(r.Op), r.Code, textsafe.Line(r.Peer), textsafe.Line(strings.Join(r.Paths, " ")))
	}
	return nil
}

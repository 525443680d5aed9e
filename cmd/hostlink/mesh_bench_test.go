package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/credstore"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/meshhub"
)

// meshFleet is a hub process and executors (hostlink serve processes,
// each in its own HOME), for the benchmarks.
type meshFleet struct {
	gateway *mcp.ClientSession
	names   []string
	local   *mcp.ClientSession // a direct local MCP session of one more hostlink serve
}

var fleet struct {
	once sync.Once
	f    *meshFleet
	err  error
}

// credsOf opens the credential store of a HOME as the benchmark's
// processes do.
func credsOf(home string) (*credstore.Store, error) {
	return credstore.Open(credstore.Options{StateDir: filepath.Join(home, "state"), Getenv: func(k string) string {
		return map[string]string{credstore.BackendEnv: "encrypted-file", credstore.PassphraseEnv: "mesh test passphrase"}[k]
	}})
}

// startFleet starts a hub and n executors; enrolment writes each
// machine's credentials directly with the hub's keys (the walk-through
// test does it through join; here it would only add minutes).
func startFleet(b *testing.B, n int) *meshFleet {
	bin := build(b)
	ctx := context.Background()
	hubHome := b.TempDir()
	_, url, token := startHub(b, bin, meshEnv(hubHome))
	st, err := credsOf(hubHome)
	if err != nil {
		b.Fatal(err)
	}
	keys, err := meshhub.LoadKeys(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	gwSeed, err := st.Get(ctx, "mesh-gateway")
	if err != nil {
		b.Fatal(err)
	}
	gwKey := mesh.Creds{Seed: gwSeed}
	gwKP, _ := gwKey.KeyPair()
	gwPub, _ := gwKP.PublicKey()
	running, err := meshhub.ReadRunning(filepath.Join(hubHome, "state", "hub"))
	if err != nil {
		b.Fatal(err)
	}
	f := &meshFleet{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("m%03d", i)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			home, err := os.MkdirTemp(b.TempDir(), name)
			if err != nil {
				b.Error(err)
				return
			}
			_, seed, key := meshhub.NewUser()
			jwt, _ := keys.Machine(key, name)
			ms, err := credsOf(home)
			if err == nil {
				err = ms.Set(ctx, mesh.SeedName, seed)
			}
			if err == nil {
				err = (&mesh.Enrolment{Key: key, Name: name, Servers: running.Servers, JWT: jwt, Callers: []mesh.Caller{{Name: "gateway", Key: gwPub}}}).Save(filepath.Join(home, "state"))
			}
			if err != nil {
				b.Error(err)
				return
			}
			w := filepath.Join(home, "w")
			os.MkdirAll(w, 0o755)
			os.WriteFile(filepath.Join(w, "f.txt"), []byte("a small file on "+name+"\n"), 0o644)
			os.MkdirAll(filepath.Join(home, "config"), 0o700)
			os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(ephemeralListen+"[[workdirs]]\nalias = \"w\"\npath = '"+w+"'\n[mesh]\nenabled = true\n"), 0o600)
			startServe(b, bin, meshEnv(home))
			mu.Lock()
			f.names = append(f.names, name)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Strings(f.names)
	f.gateway = gatewayClientB(b, ctx, url, token)
	// A direct local MCP session, to compare with.
	lhome := b.TempDir()
	os.MkdirAll(filepath.Join(lhome, "config"), 0o700)
	os.MkdirAll(filepath.Join(lhome, "w"), 0o755)
	os.WriteFile(filepath.Join(lhome, "w", "f.txt"), []byte("a small local file\n"), 0o644)
	os.WriteFile(filepath.Join(lhome, "config", "config.toml"), []byte(ephemeralListen+"[[workdirs]]\nalias = \"w\"\npath = '"+filepath.Join(lhome, "w")+"'\n"), 0o600)
	lenv := meshEnv(lhome)
	_, lurl := startServe(b, bin, lenv)
	tok, _ := run(b, lenv, bin, "token")
	tok, _, _ = strings.Cut(tok, "\n") // stdout, then the instance on stderr
	f.local = gatewayClientB(b, ctx, lurl, strings.TrimSpace(tok))
	// Wait until discovery sees every machine.
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		res, err := f.gateway.CallTool(ctx, &mcp.CallToolParams{Name: "list_machines", Arguments: map[string]any{}})
		if err == nil && !res.IsError {
			if m, ok := res.StructuredContent.(map[string]any); ok {
				if ms, ok := m["machines"].([]any); ok && len(ms) == n {
					return f
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	b.Fatalf("discovery did not see %d machines", n)
	return nil
}

func gatewayClientB(b *testing.B, ctx context.Context, url, token string) *mcp.ClientSession {
	s, err := mcp.NewClient(&mcp.Implementation{Name: "mesh-bench", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT(token)}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func benchFleet(b *testing.B) *meshFleet {
	fleet.once.Do(func() { fleet.f = startFleet(b, 100) })
	if fleet.f == nil {
		b.Skip("the fleet did not start")
	}
	return fleet.f
}

// BenchmarkMesh: a small read_file through the gateway to 1, 10 and 100
// executors (round-robin, one caller and 16 in parallel) against the
// same read through a direct local MCP session, and a fan-out of
// search_text over 100 executors. Run with
// go test -run '^$' -bench BenchmarkMesh -benchtime 2s ./cmd/hostlink
// (it starts 101 hostlink serve processes and a hub once).
func BenchmarkMesh(b *testing.B) {
	f := benchFleet(b)
	ctx := context.Background()
	read := func(s *mcp.ClientSession, machine string) {
		args := map[string]any{"path": "f.txt"}
		if machine != "" {
			args["machine"] = machine
		}
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("read_file on %q: %v %v", machine, err, res)
		}
	}
	b.Run("local", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			read(f.local, "")
		}
	})
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("gateway-%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				read(f.gateway, f.names[i%n])
			}
		})
		b.Run(fmt.Sprintf("gateway-%d-parallel16", n), func(b *testing.B) {
			b.SetParallelism(8) // 16 goroutines on 2 cores
			var next int64
			var mu sync.Mutex
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					mu.Lock()
					i := next
					next++
					mu.Unlock()
					read(f.gateway, f.names[int(i)%n])
				}
			})
		})
	}
	b.Run("local-parallel16", func(b *testing.B) {
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				read(f.local, "")
			}
		})
	})
	b.Run("fanout-100", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			res, err := f.gateway.CallTool(ctx, &mcp.CallToolParams{Name: "fanout", Arguments: map[string]any{
				"op": "search_text", "args": map[string]any{"query": "small"}, "max_machines": 100}})
			if err != nil || res.IsError {
				b.Fatalf("fanout: %v %v", err, res)
			}
			if ok := res.StructuredContent.(map[string]any)["ok"]; ok != float64(100) {
				b.Fatalf("fanout answered %v of 100", ok)
			}
		}
	})
}

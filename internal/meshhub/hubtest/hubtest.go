// Package hubtest starts real NATS servers under a hub's keys for tests:
// one node, a cluster of three on loopback, a leaf node. They run in the
// test's process (embedded nats-server), listening on loopback ports.
package hubtest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/meshhub"
)

// Hub is a running hub's keys and servers.
type Hub struct {
	Keys    meshhub.Keys
	Servers []*server.Server
	Leaf    *server.Server // nil unless withLeaf
	nodes   []meshhub.Node
	t       testing.TB
}

// URLs are the client URLs of every node (the leaf's last).
func (h *Hub) URLs() []string {
	var out []string
	for _, s := range h.Servers {
		out = append(out, s.ClientURL())
	}
	if h.Leaf != nil {
		out = append(out, h.Leaf.ClientURL())
	}
	return out
}

// Start starts one node with JetStream.
func Start(t testing.TB) *Hub {
	t.Helper()
	h := &Hub{Keys: meshhub.NewKeys(), t: t}
	node := meshhub.Node{Name: "hub", Listen: fmt.Sprintf("127.0.0.1:%d", FreePorts(t, 1)[0]), StoreDir: filepath.Join(t.TempDir(), "js")}
	o, err := h.Keys.Options(node)
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, o)
	h.Servers, h.nodes = []*server.Server{s}, []meshhub.Node{node}
	return h
}

// Cluster starts n nodes routed to each other, with JetStream, and
// waits until they form a cluster with a JetStream leader; withLeaf adds
// a leaf node dialling the first node.
func Cluster(t testing.TB, n int, withLeaf bool) *Hub {
	t.Helper()
	h := &Hub{Keys: meshhub.NewKeys(), t: t}
	ports := FreePorts(t, 2*n+1)
	clients := ports[n+1:]
	var routes []*url.URL
	for _, p := range ports[:n] {
		routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	leafPort := ports[n]
	for i := 0; i < n; i++ {
		// Fixed client ports, so that a restarted node is where its
		// clients look for it.
		node := meshhub.Node{Name: fmt.Sprintf("n%d", i+1), Listen: fmt.Sprintf("127.0.0.1:%d", clients[i]), StoreDir: filepath.Join(t.TempDir(), "js")}
		node.Cluster.Name, node.Cluster.Listen, node.Cluster.Routes = "hl", routes[i].Host, routes
		if i == 0 && withLeaf {
			node.LeafListen = fmt.Sprintf("127.0.0.1:%d", leafPort)
		}
		o, err := h.Keys.Options(node)
		if err != nil {
			t.Fatal(err)
		}
		h.Servers = append(h.Servers, start(t, o))
		h.nodes = append(h.nodes, node)
	}
	if withLeaf {
		// The leaf dials the hub as a user of the account, with a
		// credentials file, as a site behind NAT would.
		_, seed, key := meshhub.NewUser()
		jwt, err := h.Keys.Admin(key)
		if err != nil {
			t.Fatal(err)
		}
		creds := filepath.Join(t.TempDir(), "leaf.creds")
		if err := meshhub.WriteCreds(creds, jwt, seed); err != nil {
			t.Fatal(err)
		}
		node := meshhub.Node{Name: "leaf", Listen: "127.0.0.1:0", LeafRemote: &url.URL{Scheme: "nats-leaf", Host: fmt.Sprintf("127.0.0.1:%d", leafPort)}, LeafCreds: creds}
		o, err := h.Keys.Options(node)
		if err != nil {
			t.Fatal(err)
		}
		h.Leaf = start(t, o)
	}
	return h
}

func start(t testing.TB, o *server.Options) *server.Server {
	t.Helper()
	s, err := meshhub.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

// Restart shuts node i down and starts it again with the same
// configuration and store.
func (h *Hub) Restart(i int) {
	h.t.Helper()
	h.Servers[i].Shutdown()
	h.Servers[i].WaitForShutdown()
	// Options anew: the server writes into those it was given.
	o, err := h.Keys.Options(h.nodes[i])
	if err != nil {
		h.t.Fatal(err)
	}
	h.Servers[i] = start(h.t, o)
}

// FreePorts returns n loopback ports free a moment ago (for routes,
// which must be known before the nodes start).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	var out []int
	var lns []net.Listener
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

// Streams makes the hub's bucket and stream (replicated on every node)
// and returns a JetStream context of the hub's own user.
func (h *Hub) Streams(t testing.TB) jetstream.JetStream {
	t.Helper()
	creds := h.Admin(t)
	nc, err := nats.Connect(h.Servers[0].ClientURL(), nats.UserJWTAndSeed(creds.JWT, string(creds.Seed)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := meshhub.MakeStreams(context.Background(), js, len(h.Servers)); err != nil {
		t.Fatal(err)
	}
	return js
}

// Machine issues a machine's credentials.
func (h *Hub) Machine(t testing.TB, name string) mesh.Creds {
	t.Helper()
	_, seed, key := meshhub.NewUser()
	jwt, err := h.Keys.Machine(key, name)
	if err != nil {
		t.Fatal(err)
	}
	return mesh.Creds{JWT: jwt, Seed: seed}
}

// Caller issues a caller's credentials for machines (nil: all).
func (h *Hub) Caller(t testing.TB, name string, machines []string) mesh.Creds {
	t.Helper()
	_, seed, key := meshhub.NewUser()
	jwt, err := h.Keys.Caller(key, name, machines)
	if err != nil {
		t.Fatal(err)
	}
	return mesh.Creds{JWT: jwt, Seed: seed}
}

// Admin issues credentials for the hub's own user.
func (h *Hub) Admin(t testing.TB) mesh.Creds {
	t.Helper()
	_, seed, key := meshhub.NewUser()
	jwt, err := h.Keys.Admin(key)
	if err != nil {
		t.Fatal(err)
	}
	return mesh.Creds{JWT: jwt, Seed: seed}
}

// Key is the public key of creds.
func Key(c mesh.Creds) string {
	kp, _ := c.KeyPair()
	k, _ := kp.PublicKey()
	return k
}

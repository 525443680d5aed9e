package meshhub

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/meshgw"
)

// HubOptions configure a running hub.
type HubOptions struct {
	Keys Keys
	// Node, if set, is the embedded server to run; nil uses the bus at
	// Servers (a cluster or leaf node trusting the hub's operator).
	Node    *Node
	Servers []string // the URLs machines dial; default the node's
	CA      string   // a TLS bus's authorities, for the hub's own connections
	Dir     string   // the hub's state (machines.json, JetStream)
	// Gateway is the gateway's caller key pair (its seed is kept in the
	// credential store, so machines trust the same key across restarts).
	Gateway nkeys.KeyPair
	// HTTPListen serves the gateway's MCP (/mcp, with Token) and
	// enrolment; beyond loopback it needs TLS.
	HTTPListen string
	TLS        *tls.Config
	Token      string
	// Replicas of the hub's streams (1 alone, 3 in a cluster of three).
	Replicas int
	Log      *slog.Logger
}

// DefaultHTTPListen is the gateway's address by default.
const DefaultHTTPListen = "127.0.0.1:7720"

// Hub is a running hub: its server (when embedded), its own connection,
// the gateway and the enrolment endpoint.
type Hub struct {
	Server   *server.Server // nil when the bus is another's
	Admin    *nats.Conn
	JS       jetstream.JetStream
	Client   *mesh.Client // the gateway's
	Gateway  *meshgw.Gateway
	Enroller *Enroller
	http     *http.Server
	ln       net.Listener
	o        HubOptions
}

// StartHub starts the server (if embedded), makes the streams, connects
// the gateway and listens for HTTP.
func StartHub(ctx context.Context, o HubOptions) (h *Hub, err error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.HTTPListen == "" {
		o.HTTPListen = DefaultHTTPListen
	}
	h = &Hub{o: o}
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	var inProcess nats.InProcessConnProvider
	if o.Node != nil {
		so, err := o.Keys.Options(*o.Node)
		if err != nil {
			return nil, err
		}
		if h.Server, err = Start(so); err != nil {
			return nil, err
		}
		inProcess = h.Server
		if len(o.Servers) == 0 {
			o.Servers = []string{h.Server.ClientURL()}
		}
	}
	if len(o.Servers) == 0 {
		return nil, errors.New("hub: no bus: embed a server or give its URLs")
	}
	_, adminSeed, adminKey := NewUser()
	adminJWT, err := o.Keys.Admin(adminKey)
	if err != nil {
		return nil, err
	}
	h.Admin, err = connect(mesh.Dial{Servers: o.Servers, CA: o.CA, InProcess: inProcess, Name: "hostlink hub"}, adminJWT, adminSeed)
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	if h.JS, err = jetstream.New(h.Admin); err != nil {
		return nil, err
	}
	if err := h.makeStreams(ctx); err != nil {
		return nil, err
	}
	gwKey, _ := o.Gateway.PublicKey()
	gwSeed, _ := o.Gateway.Seed()
	gwJWT, err := o.Keys.Caller(gwKey, "gateway", nil)
	if err != nil {
		return nil, err
	}
	if h.Client, err = mesh.NewClient(mesh.Dial{Servers: o.Servers, CA: o.CA, InProcess: inProcess, Creds: mesh.Creds{JWT: gwJWT, Seed: gwSeed}, Name: "hostlink gateway", Log: o.Log}); err != nil {
		return nil, err
	}
	gwJS, err := jetstream.New(h.Client.Conn())
	if err != nil {
		return nil, err
	}
	h.Gateway = meshgw.New(meshgw.Options{Client: h.Client, Directory: &mesh.Directory{Client: h.Client}, Notices: &meshgw.Notices{JS: gwJS}})
	h.Enroller = &Enroller{Keys: o.Keys, Servers: o.Servers, Gateway: mesh.Caller{Name: "gateway", Key: gwKey}, Dir: o.Dir}
	host, _, err := net.SplitHostPort(o.HTTPListen)
	if err != nil {
		return nil, fmt.Errorf("hub http: %w", err)
	}
	if o.TLS == nil && !loopback(host) {
		return nil, fmt.Errorf("hub http %s: an address beyond loopback needs TLS", o.HTTPListen)
	}
	if h.ln, err = net.Listen("tcp", o.HTTPListen); err != nil {
		return nil, err
	}
	if o.TLS != nil {
		h.ln = tls.NewListener(h.ln, o.TLS)
	}
	mux := http.NewServeMux()
	srv := h.Gateway.Server()
	mux.Handle("/mcp", h.guard(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: 32 << 20, SessionTimeout: 30 * time.Minute}), o.TLS == nil))
	h.Enroller.Handlers(mux, o.Token)
	h.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	return h, nil
}

// guard lets a request to the gateway's MCP through with the hub's token,
// and, on a loopback listener, only from loopback (Host and Origin
// checked as the daemon's).
func (h *Hub) guard(next http.Handler, local bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local {
			if why := mcpserve.LocalRequest(r); why != "" {
				http.Error(w, why, http.StatusForbidden)
				return
			}
		}
		if !bearer(r, h.o.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="hostlink-hub"`)
			http.Error(w, "the hub's token is required (hostlink hub token)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Addr is the HTTP listener's address.
func (h *Hub) Addr() net.Addr { return h.ln.Addr() }

// Servers are the bus URLs the hub gives machines.
func (h *Hub) Servers() []string { return h.Enroller.Servers }

// Serve serves HTTP until ctx is done.
func (h *Hub) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- h.http.Serve(h.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.http.Shutdown(sctx)
		return nil
	}
}

// Close stops everything the hub started.
func (h *Hub) Close() {
	if h.ln != nil && h.http == nil {
		h.ln.Close()
	}
	if h.Client != nil {
		h.Client.Close()
	}
	if h.Admin != nil {
		h.Admin.Close()
	}
	if h.Server != nil {
		h.Server.Shutdown()
		h.Server.WaitForShutdown()
	}
}

func (h *Hub) makeStreams(ctx context.Context) error { return MakeStreams(ctx, h.JS, h.o.Replicas) }

// MakeStreams makes (or updates) the approval notices' bucket and the
// audit stream, with replicas each. A cluster that is still electing its
// JetStream leader is waited for, up to a minute.
func MakeStreams(ctx context.Context, js jetstream.JetStream, replicas int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		err := makeStreams(ctx, js, replicas)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func makeStreams(ctx context.Context, js jetstream.JetStream, replicas int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: mesh.ApprovalsBucket, Description: "what pending approvals on each machine ask, and where they are decided",
		History: 1, TTL: time.Hour, Replicas: replicas, Storage: jetstream.FileStorage, MaxValueSize: 64 << 10,
	})
	if err != nil {
		return fmt.Errorf("hub: approvals bucket: %w", err)
	}
	if _, err = js.CreateOrUpdateStream(ctx, AuditStreamConfig(replicas)); err != nil {
		return fmt.Errorf("hub: audit stream: %w", err)
	}
	return nil
}

// AuditStreamConfig is the aggregated audit stream: every machine's
// records on its own subject, de-duplicated by <machine>:<seq> for a
// day, so that an exporter that resends after a partition stores each
// record once.
func AuditStreamConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name: mesh.AuditStream, Description: "every machine's audit records, exported",
		Subjects: []string{mesh.AuditPrefix + ".>"}, Storage: jetstream.FileStorage, Replicas: replicas,
		Duplicates: 24 * time.Hour, AllowDirect: true, Discard: jetstream.DiscardOld,
	}
}

// connect opens the hub's own connection.
func connect(d mesh.Dial, userJWT string, seed []byte) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(d.Name), nats.UserJWTAndSeed(userJWT, string(seed)), nats.MaxReconnects(-1)}
	if d.InProcess != nil {
		opts = append(opts, nats.InProcessServer(d.InProcess))
	}
	if d.CA != "" {
		opts = append(opts, nats.RootCAs(d.CA))
	}
	return nats.Connect(joinURLs(d.Servers), opts...)
}

func joinURLs(us []string) string {
	out := ""
	for i, u := range us {
		if i > 0 {
			out += ","
		}
		out += u
	}
	return out
}

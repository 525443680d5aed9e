package meshhub

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/hostlink/hostlink/internal/private"
)

// Node configures one embedded NATS server trusting the hub's keys.
type Node struct {
	Name   string // the server's name, unique in a cluster
	Listen string // host:port for clients; "" is 127.0.0.1:7721
	// StoreDir holds JetStream's data; "" runs without JetStream.
	StoreDir string
	// TLS, if set, is required of every client, route and leaf
	// connection (a hub listening beyond loopback must have it).
	TLS *tls.Config
	// Cluster, if its Listen is set, makes the node one of a cluster.
	Cluster struct {
		Name   string
		Listen string     // host:port for routes
		Routes []*url.URL // the other nodes' route URLs
	}
	// LeafListen, if set, accepts leaf nodes (sites behind NAT dial in).
	LeafListen string
	// LeafRemote, if set, makes this node a leaf of that hub, with the
	// credentials file LeafCreds.
	LeafRemote *url.URL
	LeafCreds  string
	// MaxPayload is the largest message (default 8 MiB, which upstream
	// advises not to exceed).
	MaxPayload int32
}

// DefaultListen is the hub's client address by default.
const DefaultListen = "127.0.0.1:7721"

// DefaultMaxPayload is the hub's largest message by default.
const DefaultMaxPayload = 8 << 20

// Options are n's server options under the hub's keys.
func (k Keys) Options(n Node) (*server.Options, error) {
	oc, _, err := k.OperatorJWT()
	if err != nil {
		return nil, err
	}
	account, system, err := k.AccountJWTs()
	if err != nil {
		return nil, err
	}
	res := &server.MemAccResolver{}
	res.Store(k.AccountKey(), account)
	res.Store(pub(k.System), system)
	if n.Listen == "" {
		n.Listen = DefaultListen
	}
	host, port, err := splitHostPort(n.Listen)
	if err != nil {
		return nil, fmt.Errorf("hub listen: %w", err)
	}
	if n.TLS == nil && !loopback(host) {
		return nil, fmt.Errorf("hub listen %s: an address beyond loopback needs TLS (--tls-cert and --tls-key)", n.Listen)
	}
	if n.MaxPayload == 0 {
		n.MaxPayload = DefaultMaxPayload
	}
	o := &server.Options{
		ServerName:       n.Name,
		Host:             host,
		Port:             port,
		TrustedOperators: []*jwt.OperatorClaims{oc},
		AccountResolver:  res,
		SystemAccount:    pub(k.System),
		MaxPayload:       n.MaxPayload,
		// Past this the client's writes are behind: it is cut off as a
		// slow consumer rather than holding the server's memory.
		WriteDeadline: 10 * time.Second,
		NoSigs:        true,
	}
	if n.TLS != nil {
		o.TLSConfig, o.TLS, o.TLSVerify = n.TLS, true, n.TLS.ClientCAs != nil
		o.TLSTimeout = 5
	}
	if n.StoreDir != "" {
		if err := private.MkdirAll(n.StoreDir); err != nil {
			return nil, err
		}
		o.JetStream, o.StoreDir = true, n.StoreDir
	}
	if n.Cluster.Listen != "" {
		ch, cp, err := splitHostPort(n.Cluster.Listen)
		if err != nil {
			return nil, fmt.Errorf("cluster listen: %w", err)
		}
		o.Cluster.Name, o.Cluster.Host, o.Cluster.Port = n.Cluster.Name, ch, cp
		o.Routes = n.Cluster.Routes
		if n.TLS != nil {
			o.Cluster.TLSConfig = n.TLS
		}
	}
	if n.LeafListen != "" {
		lh, lp, err := splitHostPort(n.LeafListen)
		if err != nil {
			return nil, fmt.Errorf("leaf listen: %w", err)
		}
		o.LeafNode.Host, o.LeafNode.Port = lh, lp
		o.LeafNode.TLSConfig = n.TLS
	}
	if n.LeafRemote != nil {
		o.LeafNode.Remotes = []*server.RemoteLeafOpts{{URLs: []*url.URL{n.LeafRemote}, Credentials: n.LeafCreds, LocalAccount: k.AccountKey()}}
	}
	return o, nil
}

// Start starts a server with o and waits until it takes connections.
func Start(o *server.Options) (*server.Server, error) {
	s, err := server.NewServer(o)
	if err != nil {
		return nil, err
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return nil, errors.New("the hub's NATS server did not start within 30 s")
	}
	return s, nil
}

// WriteCreds writes a credentials file (JWT and seed, NATS's format)
// privately to path, for a leaf node or another NATS tool.
func WriteCreds(path, userJWT string, seed []byte) error {
	b, err := jwt.FormatUserConfig(userJWT, seed)
	if err != nil {
		return err
	}
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	return private.WriteFile(path, b)
}

func splitHostPort(hp string) (string, int, error) {
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q: bad port", hp)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return h, port, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

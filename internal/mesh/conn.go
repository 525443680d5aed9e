package mesh

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Creds are a NATS user's credentials: the user JWT the hub's account
// signed, and the user's NKey seed, which never leaves the machine.
type Creds struct {
	JWT  string
	Seed []byte
}

// KeyPair is the user's key pair from its seed.
func (c Creds) KeyPair() (nkeys.KeyPair, error) { return nkeys.FromSeed(c.Seed) }

// Dial says how to reach the bus.
type Dial struct {
	Servers []string // nats:// or tls:// URLs of the hub, a cluster or a leaf node
	Creds   Creds
	// CA, if set, is a PEM file of the certificate authorities a TLS
	// server must chain to (a hub with its own certificate).
	CA string
	// InProcess, if set, connects to an embedded server without a socket
	// (the hub's own gateway).
	InProcess nats.InProcessConnProvider
	Name      string // the connection's name, in the server's monitoring
	Log       *slog.Logger
}

// connect opens a connection that reconnects for ever: a laptop that
// sleeps or a hub that restarts is met again when it is back.
func (d Dial) connect(extra ...nats.Option) (*nats.Conn, error) {
	kp, err := d.Creds.KeyPair()
	if err != nil {
		return nil, errors.New("mesh: the credentials' seed is not an NKey seed")
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, err
	}
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	opts := []nats.Option{
		nats.Name(d.Name),
		nats.UserJWTAndSeed(d.Creds.JWT, string(d.Creds.Seed)),
		nats.CustomInboxPrefix(InboxPrefix(pub)),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.RetryOnFailedConnect(true),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("mesh: disconnected from the bus", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("mesh: reconnected to the bus", "server", nc.ConnectedUrlRedacted()) }),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			log.Warn("mesh: bus error", "subject", subject, "err", err)
		}),
	}
	if d.CA != "" {
		opts = append(opts, nats.RootCAs(d.CA))
	}
	if d.InProcess != nil {
		opts = append(opts, nats.InProcessServer(d.InProcess))
	}
	url := nats.DefaultURL
	if len(d.Servers) > 0 {
		url = joinURLs(d.Servers)
	}
	return nats.Connect(url, append(opts, extra...)...)
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

// ReadCreds reads a NATS credentials file (`hostlink hub caller --creds`).
func ReadCreds(path string) (Creds, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Creds{}, err
	}
	userJWT, err := jwt.ParseDecoratedJWT(b)
	if err != nil {
		return Creds{}, fmt.Errorf("%s: %w", path, err)
	}
	kp, err := jwt.ParseDecoratedNKey(b)
	if err != nil {
		return Creds{}, fmt.Errorf("%s: %w", path, err)
	}
	seed, err := kp.Seed()
	return Creds{JWT: userJWT, Seed: seed}, err
}

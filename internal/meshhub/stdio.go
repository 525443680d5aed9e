package meshhub

import (
	"context"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/meshgw"
)

// ServeStdio serves the gateway's MCP on r and w (MCP's stdio
// transport), as the gateway's caller on the bus at servers, until the
// client leaves or ctx ends.
func ServeStdio(ctx context.Context, keys Keys, gw nkeys.KeyPair, servers []string, r io.ReadCloser, w io.WriteCloser) error {
	key, _ := gw.PublicKey()
	seed, _ := gw.Seed()
	jwt, err := keys.Caller(key, "gateway", nil)
	if err != nil {
		return err
	}
	c, err := mesh.NewClient(mesh.Dial{Servers: servers, Creds: mesh.Creds{JWT: jwt, Seed: seed}, Name: "hostlink gateway (stdio)"})
	if err != nil {
		return err
	}
	defer c.Close()
	js, err := jetstream.New(c.Conn())
	if err != nil {
		return err
	}
	g := meshgw.New(meshgw.Options{Client: c, Directory: &mesh.Directory{Client: c}, Notices: &meshgw.Notices{JS: js}})
	return g.Server().Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
}

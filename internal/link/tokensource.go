package link

import (
	"context"
	"net/http"

	"github.com/coder/websocket"
)

// TokenSource supplies the bearer token the link presents, for platforms
// paired through OAuth (package pairing): it renews the token before it
// expires, and again when the platform refuses it.
type TokenSource interface {
	// Token returns the current access token.
	Token(ctx context.Context) (string, error)
	// Refresh is called after the platform answered rejected with 401; it
	// returns a renewed token (or an error when renewal is impossible).
	Refresh(ctx context.Context, rejected string) (string, error)
}

// bearer returns the token to present: the source's, else the fixed one.
func (c *Client) bearer(ctx context.Context) (string, error) {
	if c.Tokens != nil {
		return c.Tokens.Token(ctx)
	}
	return c.Token, nil
}

// dial opens the WebSocket with the bearer token. When a token source is
// set and the platform answers 401, it refreshes the token and dials once
// more, as OAUTH_FLOW asks: a refused access token is renewed with the
// refresh token, then the connection retried once.
func (c *Client) dial(ctx context.Context) (*websocket.Conn, *http.Response, error) {
	tok, err := c.bearer(ctx)
	if err != nil {
		return nil, nil, err
	}
	ws, resp, err := c.dialWith(ctx, tok)
	if err == nil || c.Tokens == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		return ws, resp, err
	}
	c.Log.Info("platform refused the access token; refreshing it")
	tok, rerr := c.Tokens.Refresh(ctx, tok)
	if rerr != nil {
		c.Log.Warn("token refresh failed", "err", rerr)
		return ws, resp, err
	}
	return c.dialWith(ctx, tok)
}

func (c *Client) dialWith(ctx context.Context, tok string) (*websocket.Conn, *http.Response, error) {
	hdr := http.Header{}
	hdr.Set("Authorization", "Bearer "+tok)
	return websocket.Dial(ctx, c.URL, &websocket.DialOptions{HTTPHeader: hdr})
}

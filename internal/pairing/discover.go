package pairing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
)

// MetadataPath is where a platform publishes its authorization server
// metadata (RFC 8414).
const MetadataPath = "/.well-known/oauth-authorization-server"

// DefaultClientID is hostlink's public OAuth client id; a platform
// registers it with the loopback redirect URIs.
const DefaultClientID = "hostlink"

// DefaultScope is what hostlink asks for: the platform's tool-use scope.
const DefaultScope = "USE_TOOLS"

// Endpoints are the platform's OAuth endpoints.
type Endpoints struct {
	Issuer        string `json:"issuer"`
	Authorization string `json:"authorization_endpoint"`
	Token         string `json:"token_endpoint"`
	Device        string `json:"device_authorization_endpoint"`
	Revocation    string `json:"revocation_endpoint"`
}

// Origin reduces a platform URL to its origin: https://host[:port]. It
// accepts the link's ws(s):// URL too. Plain http (or ws) is allowed only to
// a loopback host, as for the link itself.
func Origin(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("platform URL %q: give https://host (or the link's wss:// URL)", raw)
	}
	switch u.Scheme {
	case "https", "wss":
		u.Scheme = "https"
	case "http", "ws":
		if !loopback(u.Hostname()) {
			return "", fmt.Errorf("platform URL %q: plain http only to loopback; use https", raw)
		}
		u.Scheme = "http"
	default:
		return "", fmt.Errorf("platform URL %q: scheme must be https (or http to loopback)", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("platform URL %q: no user info", raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkEndpoint refuses an endpoint that would send tokens in the clear.
func checkEndpoint(name, raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("platform metadata: %s %q is not a URL", name, raw)
	}
	if u.Scheme == "https" || (u.Scheme == "http" && loopback(u.Hostname())) {
		return nil
	}
	return fmt.Errorf("platform metadata: %s %q must be https", name, raw)
}

// Discover fetches the platform's OAuth metadata.
func Discover(ctx context.Context, hc *http.Client, origin string) (*Endpoints, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", origin+MetadataPath, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reaching the platform: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("platform metadata %s: HTTP %d", origin+MetadataPath, resp.StatusCode)
	}
	var e Endpoints
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&e); err != nil {
		return nil, fmt.Errorf("platform metadata: %w", err)
	}
	if e.Token == "" {
		return nil, errors.New("platform metadata names no token_endpoint")
	}
	for _, c := range []struct{ name, v string }{{"authorization_endpoint", e.Authorization}, {"token_endpoint", e.Token}, {"device_authorization_endpoint", e.Device}, {"revocation_endpoint", e.Revocation}} {
		if err := checkEndpoint(c.name, c.v); err != nil {
			return nil, err
		}
	}
	return &e, nil
}

// config is the oauth2 configuration of the public client.
func (e *Endpoints) config(clientID, redirect string, scopes []string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:    clientID,
		RedirectURL: redirect,
		Scopes:      scopes,
		Endpoint: oauth2.Endpoint{
			AuthURL: e.Authorization, TokenURL: e.Token, DeviceAuthURL: e.Device,
			AuthStyle: oauth2.AuthStyleInParams,
		},
	}
}

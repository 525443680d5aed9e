package pairing

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/oauth2"

	"github.com/hostlink/hostlink/internal/credstore"
)

// DefaultTimeout is how long pairing waits for the user.
const DefaultTimeout = 5 * time.Minute

// Options configure a pairing.
type Options struct {
	Platform string // the platform's URL (https://host, or the link's wss:// URL)
	ClientID string // default DefaultClientID
	Scopes   []string
	Store    *credstore.Store
	// HTTPClient talks to the platform (default: a client with a timeout).
	HTTPClient *http.Client
	Timeout    time.Duration // default DefaultTimeout
	// FirstPort and LastPort bound the callback port range (default
	// 41899-41910).
	FirstPort, LastPort int
	// OpenBrowser opens the authorization URL (nil: only Prompt shows it).
	OpenBrowser func(url string) error
	// Prompt tells the user what to do (the URL to open, the device code).
	Prompt func(msg string)
	// OnListen, if set, is told the callback listener's address.
	OnListen func(net.Addr)
}

func (o *Options) defaults() {
	if o.ClientID == "" {
		o.ClientID = DefaultClientID
	}
	if o.Scopes == nil {
		o.Scopes = []string{DefaultScope}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.FirstPort == 0 {
		o.FirstPort, o.LastPort = FirstPort, LastPort
	}
	if o.Prompt == nil {
		o.Prompt = func(string) {}
	}
}

// start resolves the platform and its endpoints.
func (o *Options) start(ctx context.Context) (string, *Endpoints, error) {
	o.defaults()
	if o.Store == nil {
		return "", nil, errors.New("pairing: no credential store")
	}
	origin, err := Origin(o.Platform)
	if err != nil {
		return "", nil, err
	}
	e, err := Discover(ctx, o.HTTPClient, origin)
	return origin, e, err
}

// save stores the new pairing.
func (o *Options) save(ctx context.Context, origin string, e *Endpoints, t *oauth2.Token) (*Credential, error) {
	c := &Credential{Platform: origin, ClientID: o.ClientID, TokenURL: e.Token, RevokeURL: e.Revocation, Paired: time.Now().UTC()}
	c.update(t)
	if c.AccessToken == "" {
		return nil, errors.New("the platform returned no access token")
	}
	return c, Save(ctx, o.Store, c)
}

// Browser pairs through the authorization code flow with PKCE: it opens
// the authorization page and waits for the one valid callback, then
// exchanges the code and stores the tokens.
func Browser(ctx context.Context, o Options) (*Credential, error) {
	origin, e, err := o.start(ctx)
	if err != nil {
		return nil, err
	}
	if e.Authorization == "" {
		return nil, errors.New("the platform offers no authorization endpoint: try `hostlink pair --device`")
	}
	ln, err := ListenCallback(o.FirstPort, o.LastPort)
	if err != nil {
		return nil, fmt.Errorf("callback listener: %w", err)
	}
	defer ln.Close()
	if o.OnListen != nil {
		o.OnListen(ln.Addr())
	}
	redirect := fmt.Sprintf("http://%s/callback", ln.Addr())
	cfg := e.config(o.ClientID, redirect, o.Scopes)
	verifier := oauth2.GenerateVerifier()
	state := rand.Text()
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
	var cred *Credential
	cb := newCallback(state, func(rctx context.Context, code string) error {
		tctx := context.WithValue(rctx, oauth2.HTTPClient, o.HTTPClient)
		t, err := cfg.Exchange(tctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			return fmt.Errorf("exchanging the code: %w", err)
		}
		cred, err = o.save(ctx, origin, e, t)
		return err
	})
	o.Prompt("Open this page to pair hostlink with your account:\n\n  " + authURL + "\n\nWaiting for the browser on " + redirect + " …")
	if o.OpenBrowser != nil {
		if err := o.OpenBrowser(authURL); err != nil {
			o.Prompt("Could not open a browser (" + err.Error() + "); open the page above yourself.")
		}
	}
	if err := cb.wait(ctx, ln, o.Timeout); err != nil {
		return nil, err
	}
	return cred, nil
}

// Device pairs through the device authorization grant (RFC 8628): it shows
// a URL and a code to enter on any device, and polls until the user
// approves, refuses, or the code expires.
func Device(ctx context.Context, o Options) (*Credential, error) {
	origin, e, err := o.start(ctx)
	if err != nil {
		return nil, err
	}
	if e.Device == "" {
		return nil, errors.New("the platform offers no device authorization: pair in a browser (`hostlink pair` without --device)")
	}
	cfg := e.config(o.ClientID, "", o.Scopes)
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	hctx := context.WithValue(ctx, oauth2.HTTPClient, o.HTTPClient)
	da, err := cfg.DeviceAuth(hctx)
	if err != nil {
		return nil, fmt.Errorf("device authorization: %w", err)
	}
	msg := "On any device, open\n\n  " + da.VerificationURI + "\n\nand enter the code  " + da.UserCode
	if da.VerificationURIComplete != "" {
		msg += "\n\n(or open " + da.VerificationURIComplete + ")"
	}
	o.Prompt(msg + "\n\nWaiting for approval …")
	t, err := cfg.DeviceAccessToken(hctx, da)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("no approval within %s: run `hostlink pair --device` again", o.Timeout)
		}
		return nil, fmt.Errorf("device authorization: %w", err)
	}
	return o.save(ctx, origin, e, t)
}

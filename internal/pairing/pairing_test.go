package pairing_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/credstore"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/hostinfo"
	"github.com/hostlink/hostlink/internal/link"
	"github.com/hostlink/hostlink/internal/pairing"
)

// platform is a running reference platform.
type platform struct {
	srv    *devplatform.Server
	origin string
	hs     *http.Server
}

func startPlatform(t *testing.T, cfg devplatform.OAuthConfig) *platform {
	t.Helper()
	srv := devplatform.New(devplatform.NewToken(), devplatform.Config{})
	srv.SetOAuthConfig(cfg)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return &platform{srv: srv, origin: "http://" + ln.Addr().String(), hs: hs}
}

// fileStore is an encrypted-file credential store in a fresh state dir.
func fileStore(t *testing.T) (*credstore.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := credstore.Open(credstore.Options{StateDir: dir, Getenv: func(k string) string {
		return map[string]string{credstore.PassphraseEnv: "test passphrase", credstore.BackendEnv: "encrypted-file"}[k]
	}})
	if err != nil {
		t.Fatal(err)
	}
	return st, dir
}

// browser plays the user's browser: it loads the authorization URL and
// follows the redirect to the callback, returning the callback URL it
// landed on and the page's status.
type browser struct {
	t        *testing.T
	callback atomic.Value // string
	status   chan int
}

func newBrowser(t *testing.T) *browser { return &browser{t: t, status: make(chan int, 1)} }

func (b *browser) open(authURL string) error {
	go func() {
		hc := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
			b.callback.Store(req.URL.String())
			return nil
		}}
		resp, err := hc.Get(authURL)
		if err != nil {
			b.t.Errorf("browser: %v", err)
			b.status <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		b.status <- resp.StatusCode
	}()
	return nil
}

func pairBrowser(t *testing.T, p *platform, st *credstore.Store) (*pairing.Credential, *browser) {
	t.Helper()
	b := newBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cred, err := pairing.Browser(ctx, pairing.Options{Platform: p.origin, Store: st, OpenBrowser: b.open, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if s := <-b.status; s != 200 {
		t.Fatalf("success page status %d", s)
	}
	return cred, b
}

// connect runs the platform link with the stored pairing and waits for the
// control connection.
func connect(t *testing.T, p *platform, src *pairing.Source) {
	t.Helper()
	info, err := hostinfo.Collect()
	if err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	svc, err := link.New(link.Options{
		URL: "ws" + strings.TrimPrefix(p.origin, "http") + devplatform.ControlPath, Tokens: src, Info: info, Secret: secret,
		Local:   link.Limits{MaxFileSizeBytes: 1 << 20, CommandTimeoutSeconds: 30, MaxConcurrent: 4},
		Backoff: link.Backoff{Base: 20 * time.Millisecond, Max: 200 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitControl(t, p, time.Time{})
}

func waitControl(t *testing.T, p *platform, since time.Time) *devplatform.Peer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	peer, err := p.srv.WaitPeer(ctx, devplatform.ControlPeer, since)
	if err != nil {
		t.Fatal(err)
	}
	return peer
}

func TestCodeFlowEndToEnd(t *testing.T) {
	ctx := context.Background()
	p := startPlatform(t, devplatform.OAuthConfig{})
	st, stateDir := fileStore(t)
	cred, b := pairBrowser(t, p, st)
	if cred.Platform != p.origin || cred.RefreshToken == "" || cred.Expiry.IsZero() || cred.RevokeURL == "" {
		t.Fatalf("credential %+v", cred)
	}
	cb, _ := b.callback.Load().(string)
	u, _ := url.Parse(cb)
	if u.Hostname() != "127.0.0.1" || u.Path != "/callback" || u.Query().Get("code") == "" {
		t.Fatalf("callback %q", cb)
	}
	// The listener is gone once the one valid callback was handled.
	if resp, err := http.Get(cb); err == nil {
		resp.Body.Close()
		t.Fatalf("the callback listener still answers: %d", resp.StatusCode)
	}
	// The code cannot be exchanged again at the platform; trying ends the
	// tokens issued for it (RFC 6749 §4.1.2).
	resp, err := http.PostForm(p.origin+devplatform.TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {"hostlink"},
		"code": {u.Query().Get("code")}, "redirect_uri": {"http://" + u.Host + "/callback"}, "code_verifier": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "invalid_grant") {
		t.Fatalf("replayed code: %d %s", resp.StatusCode, body)
	}
	if a, r := p.srv.OAuthTokens(); a != 0 || r != 0 {
		t.Fatalf("a replayed code left %d access and %d refresh tokens", a, r)
	}

	// Pair again; the link connects with the stored token.
	cred, _ = pairBrowser(t, p, st)
	src, err := pairing.NewSource(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var refreshes atomic.Int32
	src.OnRefresh = func() { refreshes.Add(1) }
	connect(t, p, src)
	if refreshes.Load() != 0 {
		t.Fatal("refreshed a fresh token")
	}

	// A forced 401: the platform forgets the access token and drops the
	// connection; the link refreshes and reconnects.
	p.srv.ExpireAccessTokens()
	since := time.Now()
	p.srv.Peer(devplatform.ControlPeer).Close(1011, "test restart")
	waitControl(t, p, since)
	if refreshes.Load() != 1 {
		t.Fatalf("%d refreshes after a 401, want 1", refreshes.Load())
	}
	stored, err := pairing.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if stored.AccessToken == cred.AccessToken || stored.RefreshToken == cred.RefreshToken {
		t.Fatal("the refreshed tokens were not stored")
	}
	rejected := false
	for _, e := range p.srv.Events() {
		rejected = rejected || e.Kind == "rejected"
	}
	if !rejected {
		t.Fatal("the platform never refused the expired token")
	}

	// Unpair revokes at the platform and deletes everything locally.
	res, err := pairing.Unpair(ctx, st, nil, false)
	if err != nil || !res.Revoked {
		t.Fatalf("unpair: %+v %v", res, err)
	}
	if a, r := p.srv.OAuthTokens(); a != 0 || r != 0 {
		t.Fatalf("after unpair the platform holds %d access and %d refresh tokens", a, r)
	}
	if _, err := pairing.Load(ctx, st); !errors.Is(err, pairing.ErrNotPaired) {
		t.Fatalf("after unpair: %v", err)
	}
	if entries, _ := os.ReadDir(stateDir); len(entries) != 0 {
		t.Fatalf("unpair left %v", entries)
	}
	if _, err := pairing.Unpair(ctx, st, nil, false); !errors.Is(err, pairing.ErrNotPaired) {
		t.Fatalf("second unpair: %v", err)
	}
}

func TestDeviceFlowEndToEnd(t *testing.T) {
	ctx := context.Background()
	p := startPlatform(t, devplatform.OAuthConfig{DeviceInterval: 1})
	st, _ := fileStore(t)
	prompted := make(chan string, 1)
	done := make(chan error, 1)
	var cred *pairing.Credential
	go func() {
		var err error
		cred, err = pairing.Device(ctx, pairing.Options{Platform: "ws" + strings.TrimPrefix(p.origin, "http") + devplatform.ControlPath,
			Store: st, Timeout: 30 * time.Second, Prompt: func(m string) { prompted <- m }})
		done <- err
	}()
	msg := <-prompted
	i := strings.Index(msg, "enter the code  ")
	if i < 0 {
		t.Fatalf("prompt %q", msg)
	}
	code := strings.Fields(msg[i+len("enter the code  "):])[0]
	// The user enters the code on the verification page.
	resp, err := http.PostForm(p.origin+devplatform.DevicePath, url.Values{"user_code": {strings.ToLower(code)}, "action": {"allow"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("approval page: %d", resp.StatusCode)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if cred.Platform != p.origin {
		t.Fatalf("platform %q", cred.Platform)
	}
	src, err := pairing.NewSource(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	connect(t, p, src)
}

func TestDeviceFlowDenied(t *testing.T) {
	p := startPlatform(t, devplatform.OAuthConfig{DeviceInterval: 1})
	st, _ := fileStore(t)
	done := make(chan error, 1)
	go func() {
		_, err := pairing.Device(context.Background(), pairing.Options{Platform: p.origin, Store: st, Timeout: 30 * time.Second, Prompt: func(m string) {
			i := strings.Index(m, "enter the code  ")
			if i >= 0 {
				p.srv.ApproveDevice(strings.Fields(m[i+16:])[0], false)
			}
		}})
		done <- err
	}()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Fatalf("err = %v", err)
	}
	if _, err := pairing.Load(context.Background(), st); !errors.Is(err, pairing.ErrNotPaired) {
		t.Fatal("a denied pairing stored something")
	}
}

func TestBrowserDenied(t *testing.T) {
	p := startPlatform(t, devplatform.OAuthConfig{DenyAuthorization: true})
	st, _ := fileStore(t)
	b := newBrowser(t)
	_, err := pairing.Browser(context.Background(), pairing.Options{Platform: p.origin, Store: st, OpenBrowser: b.open, Timeout: 20 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Fatalf("err = %v", err)
	}
	if s := <-b.status; s != 400 {
		t.Fatalf("failure page status %d", s)
	}
}

func TestBrowserTimeout(t *testing.T) {
	p := startPlatform(t, devplatform.OAuthConfig{})
	st, _ := fileStore(t)
	_, err := pairing.Browser(context.Background(), pairing.Options{Platform: p.origin, Store: st, Timeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no answer from the browser") {
		t.Fatalf("err = %v", err)
	}
}

func TestRefreshBeforeExpiry(t *testing.T) {
	ctx := context.Background()
	// Tokens that live less than RefreshSkew are renewed on every use.
	p := startPlatform(t, devplatform.OAuthConfig{AccessTTL: time.Minute})
	st, _ := fileStore(t)
	cred, _ := pairBrowser(t, p, st)
	src, err := pairing.NewSource(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := src.Token(ctx)
	if err != nil || tok == cred.AccessToken {
		t.Fatalf("token %v: not refreshed before expiry", err)
	}
	// A refresh for a token already replaced returns the new one.
	again, err := src.Refresh(ctx, cred.AccessToken)
	if err != nil || again != tok {
		t.Fatalf("refresh of a stale token: %v", err)
	}
	// Once the platform forgets the refresh token, the user must pair again.
	p.srv.ExpireAccessTokens()
	if _, err := pairing.Unpair(ctx, st, nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Refresh(ctx, tok); !errors.Is(err, pairing.ErrNotPaired) && !errors.Is(err, pairing.ErrRefreshRefused) {
		t.Fatalf("refresh after unpair: %v", err)
	}
}

func TestUnpairKeepsTokensWhenRevocationFails(t *testing.T) {
	ctx := context.Background()
	p := startPlatform(t, devplatform.OAuthConfig{})
	st, _ := fileStore(t)
	pairBrowser(t, p, st)
	p.hs.Close() // the platform is unreachable
	if _, err := pairing.Unpair(ctx, st, nil, false); err == nil || !strings.Contains(err.Error(), "kept") {
		t.Fatalf("err = %v", err)
	}
	if _, err := pairing.Load(ctx, st); err != nil {
		t.Fatalf("tokens lost after a failed revocation: %v", err)
	}
	res, err := pairing.Unpair(ctx, st, nil, true)
	if err != nil || res.Revoked {
		t.Fatalf("local unpair: %+v %v", res, err)
	}
	if _, err := pairing.Load(ctx, st); !errors.Is(err, pairing.ErrNotPaired) {
		t.Fatal(err)
	}
}

func TestOrigin(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"https://platform.example", "https://platform.example", ""},
		{"wss://platform.example:8443/ws/local-executor", "https://platform.example:8443", ""},
		{"ws://127.0.0.1:9/ws/local-executor", "http://127.0.0.1:9", ""},
		{"http://localhost:8080/", "http://localhost:8080", ""},
		{"http://platform.example", "", "only to loopback"},
		{"ftp://x", "", "scheme"},
		{"https://user:pw@platform.example", "", "user info"},
		{"not a url", "", "give https"},
	} {
		got, err := pairing.Origin(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q %v", tc.in, got, err)
		}
	}
}

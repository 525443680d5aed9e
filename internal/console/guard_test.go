package console_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"net/http/httptest"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/console"
)

const token = "a-token-a-token-a-token-a-token-a-token"

func newConsole(t *testing.T) (*httptest.Server, *approvals.Broker, string) {
	t.Helper()
	return newConsoleWith(t, nil)
}

// newConsoleWith is newConsole with options changed by mod (given the
// options with the broker, the audit log and its directory set).
func newConsoleWith(t *testing.T, mod func(*console.Options)) (*httptest.Server, *approvals.Broker, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "audit")
	log, err := audit.Open(audit.Options{Dir: dir, Key: make([]byte, 32), MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	b := approvals.New(approvals.Options{Timeout: time.Minute, Wait: time.Millisecond, Audit: log})
	mux := http.NewServeMux()
	o := console.Options{Token: token, Broker: b, AuditDir: dir, Audit: log}
	if mod != nil {
		mod(&o)
	}
	mux.Handle(console.Prefix, console.New(o))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, b, dir
}

// login returns a client holding a session, and the session's form token
// read from a page.
func login(t *testing.T, srv *httptest.Server) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	req, _ := http.NewRequest("POST", srv.URL+"/console/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("login: %v %v", err, resp)
	}
	var cookie *http.Cookie
	u, _ := url.Parse(srv.URL + "/console/")
	for _, ck := range jar.Cookies(u) {
		cookie = ck
	}
	if cookie == nil {
		t.Fatal("no session cookie")
	}
	b := new(strings.Builder)
	buf := make([]byte, 1<<16)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	resp.Body.Close()
	_, rest, ok := strings.Cut(b.String(), `name="csrf" value="`)
	if !ok {
		t.Fatalf("no form token on the page")
	}
	csrf, _, _ := strings.Cut(rest, `"`)
	return c, csrf
}

func TestGuards(t *testing.T) {
	srv, b, _ := newConsole(t)
	// An approval to try to decide.
	go b.Require(t.Context(), approvals.Action{Op: "write_file", Summary: "w", SHA256: "x"})
	var id string
	for id == "" {
		if p := b.List(true); len(p) > 0 {
			id = p[0].ID
		}
		time.Sleep(time.Millisecond)
	}
	client, csrf := login(t, srv)
	decide := func(origin, referer, token string) int {
		req, _ := http.NewRequest("POST", srv.URL+"/console/approvals/"+id+"/decide",
			strings.NewReader(url.Values{"csrf": {token}, "decision": {"approve"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if referer != "" {
			req.Header.Set("Referer", referer)
		}
		c := &http.Client{Jar: client.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		name, origin, referer, token string
		want                         int
	}{
		{"foreign origin", "http://evil.example", "", csrf, 403},
		{"other port", "http://127.0.0.1:1", "", csrf, 403},
		{"no origin, no referer", "", "", csrf, 403},
		{"no form token", srv.URL, "", "", 403},
		{"wrong form token", srv.URL, "", "guess", 403},
	} {
		if got := decide(tt.origin, tt.referer, tt.token); got != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, got, tt.want)
		}
	}
	if a, _ := b.Get(id); a.State != approvals.Pending {
		t.Fatalf("decided by a refused request: %+v", a)
	}
	if got := decide("", srv.URL+"/console/approvals", csrf); got != http.StatusSeeOther {
		t.Fatalf("same-origin decision (by Referer): %d", got)
	}
	if a, _ := b.Get(id); a.State != approvals.Approved || a.DecidedVia != "console" {
		t.Fatalf("after the decision: %+v", a)
	}

	// Every response forbids framing; pages need a session.
	resp, err := http.Get(srv.URL + "/console/audit")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := resp.Header
	if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" ||
		resp.Request.URL.Path != "/console/login" {
		t.Fatalf("headers %v, ended at %s", h, resp.Request.URL)
	}
	// A non-loopback Host (DNS rebinding) is refused.
	req, _ := http.NewRequest("GET", srv.URL+"/console/login", nil)
	req.Host = "evil.example"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Fatalf("rebinding Host: %v %v", err, resp)
	}
	// The cookie is HttpOnly and SameSite=Strict.
	req, _ = http.NewRequest("POST", srv.URL+"/console/login", strings.NewReader("token="+token))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	resp, err = (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sc := resp.Header.Get("Set-Cookie")
	if !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Strict") {
		t.Fatalf("cookie %q", sc)
	}
}

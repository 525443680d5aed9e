package console_test

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"net/http/httptest"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/console"
)

// consoles are the console behind each test server, for logging in.
var consoles sync.Map // *httptest.Server → *console.Server

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
	o := console.Options{Broker: b, AuditDir: dir, Audit: log, Refusals: audit.NewRefusals(log, 0)}
	if mod != nil {
		mod(&o)
	}
	cs := console.New(o)
	mux.Handle(console.Prefix, cs)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	consoles.Store(srv, cs)
	return srv, b, dir
}

// loginLink is a one-time login link of srv's console, as `hostlink
// console` gets one from the daemon.
func loginLink(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	cs, _ := consoles.Load(srv)
	p, _ := cs.(*console.Server).NewLogin()
	return srv.URL + p
}

// login returns a client holding a session, and the session's form token
// read from a page.
func login(t *testing.T, srv *httptest.Server) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(loginLink(t, srv))
	if err != nil || resp.StatusCode != 200 || resp.Request.URL.Path != "/console/approvals" {
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
	// The cookie is HttpOnly and SameSite=Strict, and lasts only as long
	// as the browser session (no Max-Age or Expires).
	resp, err = noRedirect.Get(loginLink(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sc := resp.Header.Get("Set-Cookie")
	if !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Strict") || strings.Contains(sc, "Max-Age") || strings.Contains(sc, "Expires") {
		t.Fatalf("cookie %q", sc)
	}
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestLoginLink: a one-time login link logs a browser in once; used
// again, altered or unknown it logs nobody in, and neither does
// anything else a client could present: a token in a form, a bearer
// header, a session cookie it made up. Links are kept in memory only:
// the audit log never holds one.
func TestLoginLink(t *testing.T) {
	srv, _, dir := newConsole(t)
	session := func(resp *http.Response) bool {
		for _, c := range resp.Cookies() {
			if c.Name == "hostlink_console" && c.Value != "" {
				return true
			}
		}
		return false
	}
	get := func(u string, header ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", u, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	link := loginLink(t, srv)
	if resp := get(link); resp.StatusCode != http.StatusSeeOther || !session(resp) || resp.Header.Get("Location") != "/console/approvals" {
		t.Fatalf("the link, first use: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := get(link); resp.StatusCode != http.StatusUnauthorized || session(resp) {
		t.Fatalf("the link, used again: %d %v", resp.StatusCode, resp.Header)
	}
	code := strings.TrimPrefix(link, srv.URL+"/console/login?code=")
	for _, u := range []string{
		srv.URL + "/console/login?code=" + code[:len(code)-1] + "0",
		srv.URL + "/console/login?code=" + strings.Repeat("0", len(code)),
		srv.URL + "/console/login?code=",
	} {
		if resp := get(u); session(resp) {
			t.Errorf("%s logged in", u)
		}
	}

	// Nothing else opens the console.
	const tok = "a-token-a-token-a-token-a-token-a-token"
	for _, tt := range []struct {
		name string
		req  func() *http.Request
	}{
		{"a token in the login form", func() *http.Request {
			r, _ := http.NewRequest("POST", srv.URL+"/console/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Header.Set("Origin", srv.URL)
			return r
		}},
		{"a token as the code", func() *http.Request {
			r, _ := http.NewRequest("GET", srv.URL+"/console/login?code="+tok, nil)
			return r
		}},
		{"a bearer header", func() *http.Request {
			r, _ := http.NewRequest("GET", srv.URL+"/console/approvals", nil)
			r.Header.Set("Authorization", "Bearer "+tok)
			return r
		}},
		{"a session cookie made up", func() *http.Request {
			r, _ := http.NewRequest("GET", srv.URL+"/console/approvals", nil)
			r.AddCookie(&http.Cookie{Name: "hostlink_console", Value: tok})
			return r
		}},
	} {
		resp, err := noRedirect.Do(tt.req())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if session(resp) || resp.StatusCode == http.StatusOK {
			t.Errorf("%s: %d, a session %v", tt.name, resp.StatusCode, session(resp))
		}
	}
	lines, err := audit.Tail(dir, 100)
	if err != nil {
		t.Fatal(err)
	}
	logins := 0
	for _, l := range lines {
		if l.Op == "console_login" && l.Code == "OK" {
			logins++
		}
		if b, _ := json.Marshal(l); strings.Contains(string(b), code) {
			t.Errorf("the audit log holds the link's code: %s", b)
		}
	}
	if logins != 1 {
		t.Errorf("%d logins audited, want 1", logins)
	}
}

// TestLoginLinkLimits: a link works until LoginTTL has passed and not
// from then on, judged by the console's clock; at most 16 links wait to
// be used, a 17th ending the oldest.
func TestLoginLinkLimits(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	move := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	srv, _, _ := newConsoleWith(t, func(o *console.Options) { o.Now = clock })
	cs, _ := consoles.Load(srv)
	c := cs.(*console.Server)
	works := func(p string) bool {
		t.Helper()
		resp, err := noRedirect.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusSeeOther
	}
	inTime, _ := c.NewLogin()
	late, _ := c.NewLogin()
	move(console.LoginTTL - time.Nanosecond)
	if !works(inTime) {
		t.Error("a link just before its end does not work")
	}
	move(time.Nanosecond)
	if works(late) {
		t.Error("a link at its end works")
	}
	var links []string
	for range 17 {
		p, _ := c.NewLogin()
		links = append(links, p)
	}
	if works(links[0]) {
		t.Error("the oldest of 17 waiting links still works")
	}
	for i, p := range links[1:] {
		if !works(p) {
			t.Errorf("link %d of the newest 16 does not work", i+2)
		}
	}
}

package console

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/connlimit"
	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/textsafe"
)

// Prefix is where the console is served.
const Prefix = "/console/"

const (
	cookieName = "hostlink_console"
	sessionTTL = 12 * time.Hour
	maxForm    = 64 << 10
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options are what the console shows and acts on.
type Options struct {
	// Token is the bearer token (as for MCP) that logs a browser in.
	Token string
	// Broker holds the approvals the console lists and decides.
	Broker *approvals.Broker
	// Registry answers read-only operations (commands and their output,
	// agent tasks), called as transport "console".
	Registry *ops.Registry
	// AuditDir is the audit log's directory; AuditKey its key, for
	// verifying the chain.
	AuditDir string
	AuditKey func() ([]byte, error)
	// Audit records logins; Refusals refused requests and failed logins
	// (counted, so that a flood of them does not grow the audit log).
	Audit    ops.Auditor
	Refusals *audit.Refusals
	// Status is the daemon's status (daemon.Status), shown as is.
	Status func() any
	// Policy is the policy in force, shown read-only.
	Policy func() any
	// SaveGrant, if set, shows (apply false) or writes and reloads (apply
	// true) the configuration that keeps a grant past the daemon's life
	// (daemon.Daemon.SaveGrant).
	SaveGrant func(id string, apply bool, by string) (apitype.SaveGrantResult, error)
	// Thumbs holds thumbnails of the latest observations, for the desktop
	// page (see ops.Options.Results).
	Thumbs *Thumbs
	// Sessions are the client sessions open now, shown connected.
	Sessions *ops.Sessions
	// Instance is the daemon's state directory, named on the login page:
	// `hostlink token` run in another environment prints another
	// instance's token.
	Instance string
}

// Server is the console's HTTP handler.
type Server struct {
	o Options
	// pages are parsed on the first page served, not in New: parsing
	// them all took much of a daemon's start-up, which `hostlink mcp`
	// waits for when it starts one.
	pagesOnce sync.Once
	pages     map[string]*template.Template

	mu       sync.Mutex
	sessions map[string]*session
}

type session struct {
	id      string
	csrf    string
	expires time.Time
}

// New returns the console.
func New(o Options) *Server {
	return &Server{o: o, sessions: map[string]*session{}}
}

// parsePages parses every page template with the layout and its parts.
func (s *Server) parsePages() {
	funcs := template.FuncMap{"json": prettyJSON, "short": short, "join": join, "local": local, "size": size,
		"isDiff": isDiff, "diffLines": diffLines, "scopes": scopeChoices,
		"pair": func(a approvals.Approval, csrf string) formData { return formData{a, csrf} }, "inc": func(n int) int { return n + 1 }}
	maps.Copy(funcs, formatFuncs)
	s.pages = map[string]*template.Template{}
	names, _ := fs.Glob(templateFS, "templates/*.html")
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" || base == "parts" {
			continue
		}
		s.pages[base] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/parts.html", n))
	}
}

// ServeHTTP guards every request, then routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // "no-referrer" would make a POST's Origin "null"
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if why := s.refusal(r); why != "" {
		s.auditRefusal(r, why)
		h.Set("Connection", "close")
		http.Error(w, why, http.StatusForbidden)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(Prefix, "/"))
	if strings.HasPrefix(path, "/static/") {
		sub, _ := fs.Sub(staticFS, "static")
		http.StripPrefix(Prefix+"static/", http.FileServerFS(sub)).ServeHTTP(w, r)
		return
	}
	if path == "/login" {
		s.login(w, r)
		return
	}
	sess := s.session(r)
	if sess != nil {
		connlimit.Trust(r.Context())
	}
	if sess == nil {
		if r.Method == http.MethodGet && r.URL.Query().Get("fragment") == "" {
			http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
			return
		}
		h.Set("Connection", "close")
		http.Error(w, "log in first", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(sess.csrf)) != 1 {
			s.auditRefusal(r, "missing or wrong form token")
			http.Error(w, "the form's token is missing or wrong; reload the page", http.StatusForbidden)
			return
		}
	} else if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.route(w, r, sess, path)
}

// refusal returns why r is refused before anything else: not local (see
// mcpserve.LocalRequest), from another origin, or a state-changing request
// that does not prove its origin.
func (s *Server) refusal(r *http.Request) string {
	if why := mcpserve.LocalRequest(r); why != "" {
		return why
	}
	self := "http://" + r.Host
	origin := r.Header.Get("Origin")
	if origin != "" && origin != self {
		return "cross-origin requests are refused"
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return "cross-origin requests are refused"
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && origin == "" {
		// Browsers send Origin with every POST; without it, the Referer
		// must be ours.
		if ref := r.Referer(); ref != self+"/" && !strings.HasPrefix(ref, self+"/") {
			return "cross-origin requests are refused"
		}
	}
	return ""
}

func (s *Server) auditRefusal(r *http.Request, why string) {
	s.o.Refusals.Refuse(mcpserve.RemoteIP(r), audit.Record{Time: time.Now(), Transport: audit.Console, Peer: r.RemoteAddr,
		Op: "console_request_refused", Code: "AUTH_FAILED", Details: map[string]any{"reason": why, "method": r.Method, "path": short(r.URL.Path, 128)}})
}

func (s *Server) session(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[c.Value]
	if sess == nil || time.Now().After(sess.expires) {
		delete(s.sessions, c.Value)
		return nil
	}
	return sess
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		s.render(w, "login", nil, map[string]any{"Title": "Log in", "Instance": s.o.Instance})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	ok := mcpserve.TokenMatches(r.PostFormValue("token"), s.o.Token)
	if !ok {
		s.o.Refusals.Refuse(mcpserve.RemoteIP(r), audit.Record{Time: time.Now(), Transport: audit.Console, Peer: r.RemoteAddr,
			Op: "console_login", Code: "AUTH_FAILED", Details: map[string]any{"reason": "wrong token"}})
	} else if s.o.Audit != nil {
		if err := s.o.Audit.Append(audit.Record{Time: time.Now(), Transport: audit.Console, Peer: r.RemoteAddr, Op: "console_login", Code: "OK"}); err != nil {
			// No session for a login the log cannot show.
			slog.Warn("a console login is not in the audit log", "peer", r.RemoteAddr, "err", err)
			ok = false
		}
	}
	if !ok {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusUnauthorized)
		s.render(w, "login", nil, map[string]any{"Title": "Log in", "Instance": s.o.Instance,
			"Error": "That is not this hostlink's token: `hostlink token` prints it when run in the daemon's environment, and says which state directory its token belongs to."})
		return
	}
	sess := &session{id: randomHex(32), csrf: randomHex(32), expires: time.Now().Add(sessionTTL)}
	s.mu.Lock()
	for id, old := range s.sessions {
		if time.Now().After(old.expires) {
			delete(s.sessions, id)
		}
	}
	s.sessions[sess.id] = sess
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: sess.id, Path: strings.TrimSuffix(Prefix, "/"),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: int(sessionTTL.Seconds())})
	http.Redirect(w, r, Prefix+"approvals", http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, sess *session) {
	s.mu.Lock()
	delete(s.sessions, sess.id)
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: strings.TrimSuffix(Prefix, "/"), HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
}

// render writes page (or, when fragment is set, only that template of it).
func (s *Server) render(w http.ResponseWriter, page string, sess *session, data map[string]any) {
	s.pagesOnce.Do(s.parsePages)
	t := s.pages[page]
	if sess != nil {
		data["CSRF"] = sess.csrf
	}
	data["Page"] = page
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	name := "layout.html"
	if f, _ := data["Fragment"].(string); f != "" {
		name = f
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	// html/template escapes markup but not what a browser hides or
	// reorders: control, bidirectional and zero-width characters in an
	// approval's command or preview, a path or an audit detail. The page
	// is shown with every such character as a visible escape (textsafe);
	// the templates hold none themselves.
	w.Write([]byte(textsafe.Block(b.String())))
}

// call runs a read-only operation for the console and returns its result
// as generic JSON.
func (s *Server) call(ctx context.Context, r *http.Request, op string, args any) (map[string]any, error) {
	if s.o.Registry == nil {
		return nil, nil
	}
	if o, ok := s.o.Registry.Lookup(op); !ok || !o.ReadOnly {
		return nil, nil
	}
	b, _ := json.Marshal(args)
	out, err := s.o.Registry.Call(ctx, ops.Caller{Transport: audit.Console, Peer: r.RemoteAddr}, op, b, nil)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	raw, _ := json.Marshal(out)
	json.Unmarshal(raw, &m)
	return m, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// formData is what the decide form of an approval needs: the approval and
// the session's form token.
type formData struct {
	A approvals.Approval
	B string
}

// join joins a list of strings, typed ([]string, from an audit record) or
// generic ([]any, from an operation's result decoded as JSON).
func join(list any, sep string) string {
	switch l := list.(type) {
	case []string:
		return strings.Join(l, sep)
	case []any:
		parts := make([]string, len(l))
		for i, v := range l {
			parts[i] = fmt.Sprint(v)
		}
		return strings.Join(parts, sep)
	}
	return ""
}

// local is t in the computer's time zone: the time of day, with the date
// when it is not today.
func local(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.Local()
	if y, m, d := t.Date(); time.Now().Format("2006-01-02") != fmt.Sprintf("%04d-%02d-%02d", y, m, d) {
		return t.Format("2006-01-02 15:04:05")
	}
	return t.Format("15:04:05")
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

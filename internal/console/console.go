package console

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
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
	"os"
	"slices"
	"strconv"
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
	// LoginTTL is how long a one-time login link works, if unused.
	LoginTTL = 2 * time.Minute
	// maxLogins bounds the links waiting to be used; a new one past it
	// ends the oldest.
	maxLogins = 16
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options are what the console shows and acts on.
type Options struct {
	// Broker holds the approvals the console lists and decides.
	Broker *approvals.Broker
	// Registry answers read-only operations (commands and their output,
	// agent tasks), called as transport "console".
	Registry *ops.Registry
	// AuditDir is the audit log's directory, AuditHead its head file
	// (audit.Options.HeadPath) and AuditKey its key, for verifying the
	// chain.
	AuditDir  string
	AuditHead string
	AuditKey  func() ([]byte, error)
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
	// Now is the clock login links are judged by (default time.Now);
	// tests move it instead of sleeping.
	Now func() time.Time
	// Sessions are the client sessions open now, shown connected.
	Sessions *ops.Sessions
	// Instance is the daemon's state directory, named on the login page:
	// `hostlink console` run in another environment opens another
	// instance's console.
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
	logins   []login // one-time login links not used yet, oldest first
}

// login is a one-time login link's code, as its SHA-256, and when it
// stops working.
type login struct {
	sum     [sha256.Size]byte
	expires time.Time
}

type session struct {
	id      string
	csrf    string
	expires time.Time
}

// New returns the console.
func New(o Options) *Server {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Server{o: o, sessions: map[string]*session{}}
}

// NewLogin makes a one-time login link: its path and query on the
// console's origin ("/console/login?code=…"), working once, until
// expires. Only the daemon's control channel hands one out (`hostlink
// console`), so holding one means being the user there; the code is
// kept in memory only, as its hash, and is never written anywhere.
func (s *Server) NewLogin() (pathAndQuery string, expires time.Time) {
	code := randomHex(32)
	expires = s.o.Now().Add(LoginTTL)
	s.mu.Lock()
	s.logins = append(s.logins, login{sha256.Sum256([]byte(code)), expires})
	if len(s.logins) > maxLogins {
		s.logins = slices.Delete(s.logins, 0, len(s.logins)-maxLogins)
	}
	s.mu.Unlock()
	return Prefix + "login?code=" + code, expires
}

// EndSessions logs every browser out and ends every login link not used
// yet: when [policy] confirm_in_person turns on, a session or link that
// may have come from a link handed to a program must not outlive it.
func (s *Server) EndSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.sessions)
	s.logins = nil
}

// useLogin reports whether code is a login link's that has not been used
// and has not expired, and uses it up either way.
func (s *Server) useLogin(code string) bool {
	sum := sha256.Sum256([]byte(code))
	now := s.o.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := false
	s.logins = slices.DeleteFunc(s.logins, func(l login) bool {
		if subtle.ConstantTimeCompare(l.sum[:], sum[:]) == 1 {
			ok = now.Before(l.expires)
			return true
		}
		return !now.Before(l.expires)
	})
	return ok
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

// login exchanges a one-time login link's code for a session: the only
// way in. The MCP bearer token, or any other credential an agent, the
// platform or a companion holds, opens nothing here.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	if r.Method != http.MethodGet || code == "" {
		if r.Method != http.MethodGet {
			s.o.Refusals.Refuse(mcpserve.RemoteIP(r), audit.Record{Time: time.Now(), Transport: audit.Console, Peer: r.RemoteAddr,
				Op: "console_login", Code: "AUTH_FAILED", Details: map[string]any{"reason": "not a login link"}})
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusUnauthorized)
		}
		s.render(w, "login", nil, map[string]any{"Title": "Log in", "Instance": s.o.Instance})
		return
	}
	ok, reason := s.useLogin(code), "unknown, used or expired login link"
	// The link reaches the browser as an argument of the opener, which
	// other local users can read (ps) on Linux and macOS: where the
	// kernel says who owns the other end, a link opened by another user
	// (not root, who is beyond any check) is used up and logs nobody in.
	if uid, measured := connlimit.PeerUID(r.Context()); ok && measured && uid != 0 && int64(uid) != int64(os.Getuid()) {
		ok, reason = false, "a login link opened by another local user (uid "+strconv.FormatUint(uint64(uid), 10)+")"
	}
	if !ok {
		s.o.Refusals.Refuse(mcpserve.RemoteIP(r), audit.Record{Time: time.Now(), Transport: audit.Console, Peer: r.RemoteAddr,
			Op: "console_login", Code: "AUTH_FAILED", Details: map[string]any{"reason": reason}})
	} else if s.o.Audit != nil {
		if err := s.o.Audit.Append(audit.Record{Time: time.Now(), Transport: audit.Console, Peer: r.RemoteAddr, Op: "console_login", Code: "OK",
			Details: map[string]any{"with": "one-time login link"}}); err != nil {
			// No session for a login the log cannot show.
			slog.Warn("a console login is not in the audit log", "peer", r.RemoteAddr, "err", err)
			ok = false
		}
	}
	if !ok {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusUnauthorized)
		s.render(w, "login", nil, map[string]any{"Title": "Log in", "Instance": s.o.Instance,
			"Error": "That login link does not work: each one works once, for " + LoginTTL.String() + ". Run `hostlink console` again for a new one."})
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
	// A browser-session cookie (no Max-Age): not kept in the browser's
	// profile for its next run; the daemon ends it after sessionTTL anyway.
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: sess.id, Path: strings.TrimSuffix(Prefix, "/"),
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	// The redirect takes the used code out of the address bar.
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

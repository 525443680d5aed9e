package devplatform

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// OAuth endpoints of the reference platform. They follow the platform's
// OAUTH_FLOW (authorization code with PKCE for a public client, loopback
// redirect URIs) and add the device authorization grant (RFC 8628) and
// server metadata (RFC 8414) so clients discover them.
const (
	MetadataPath      = "/.well-known/oauth-authorization-server"
	AuthorizePath     = "/auth/authorize"
	DevicePath        = "/auth/device" // the page a user enters a user code on
	TokenPath         = "/api/oauth/token"
	DeviceAuthPath    = "/api/oauth/device_authorization"
	RevokePath        = "/api/oauth/revoke"
	DefaultClientID   = "hostlink"
	deviceCodeGrant   = "urn:ietf:params:oauth:grant-type:device_code"
	codeTTL           = time.Minute
	deviceTTL         = 10 * time.Minute
	defaultAccessTTL  = time.Hour
	defaultDeviceWait = 5 // seconds between device polls
)

// OAuthConfig configures the reference platform's authorization server.
// There are no accounts: authorization is granted to whoever asks, as if
// the one user were logged in and clicked "Allow", unless DenyAuthorization
// is set.
type OAuthConfig struct {
	ClientID          string        // the public client's id; default DefaultClientID
	AccessTTL         time.Duration // access token lifetime; default 1h
	DeviceInterval    int           // seconds a device client waits between polls; default 5
	DenyAuthorization bool          // the user clicks "Deny"
}

// oauthState is the authorization server's memory: codes, device grants and
// live tokens. Each refresh token starts a family; rotating or revoking it
// ends the family's access tokens too.
type oauthState struct {
	mu      sync.Mutex
	cfg     OAuthConfig
	codes   map[string]*authCode
	devices map[string]*deviceGrant // by device code
	access  map[string]accessToken
	refresh map[string]string // refresh token → family
	used    map[string]string // consumed codes → family, to revoke on replay
	issued  []string          // every token ever issued, for tests that look for leaks
}

type authCode struct {
	clientID, redirect, challenge, scope string
	expires                              time.Time
}

type deviceGrant struct {
	userCode, scope string
	expires         time.Time
	approved        bool
	denied          bool
	lastPoll        time.Time
}

type accessToken struct {
	family  string
	expires time.Time
}

func (o *oauthState) init() {
	if o.codes == nil {
		o.codes = map[string]*authCode{}
		o.devices = map[string]*deviceGrant{}
		o.access = map[string]accessToken{}
		o.refresh = map[string]string{}
		o.used = map[string]string{}
	}
	if o.cfg.ClientID == "" {
		o.cfg.ClientID = DefaultClientID
	}
	if o.cfg.AccessTTL <= 0 {
		o.cfg.AccessTTL = defaultAccessTTL
	}
	if o.cfg.DeviceInterval <= 0 {
		o.cfg.DeviceInterval = defaultDeviceWait
	}
}

// SetOAuthConfig replaces the authorization server's configuration.
func (s *Server) SetOAuthConfig(c OAuthConfig) {
	s.oauth.mu.Lock()
	defer s.oauth.mu.Unlock()
	s.oauth.cfg = c
	s.oauth.init()
}

// ExpireAccessTokens makes every issued access token invalid, so the next
// connection is refused with 401 and the client must refresh.
func (s *Server) ExpireAccessTokens() {
	s.oauth.mu.Lock()
	defer s.oauth.mu.Unlock()
	clear(s.oauth.access)
}

// OAuthTokens reports how many access and refresh tokens are live.
func (s *Server) OAuthTokens() (access, refresh int) {
	s.oauth.mu.Lock()
	defer s.oauth.mu.Unlock()
	now := time.Now()
	for _, a := range s.oauth.access {
		if now.Before(a.expires) {
			access++
		}
	}
	return access, len(s.oauth.refresh)
}

// IssuedTokens returns every access and refresh token issued so far,
// live or not, so a test can check that none was written anywhere.
func (s *Server) IssuedTokens() []string {
	s.oauth.mu.Lock()
	defer s.oauth.mu.Unlock()
	return slices.Clone(s.oauth.issued)
}

// ApproveDevice approves (or denies) the pending device grant with that
// user code, as the user does on the verification page.
func (s *Server) ApproveDevice(userCode string, allow bool) error {
	s.oauth.mu.Lock()
	defer s.oauth.mu.Unlock()
	s.oauth.init()
	want := normUserCode(userCode)
	for _, d := range s.oauth.devices {
		if d.userCode == want && time.Now().Before(d.expires) && !d.approved && !d.denied {
			d.approved, d.denied = allow, !allow
			return nil
		}
	}
	return fmt.Errorf("no pending device authorization with user code %q", userCode)
}

// oauthAccepts reports whether tok is a live access token.
func (s *Server) oauthAccepts(tok string) bool {
	s.oauth.mu.Lock()
	defer s.oauth.mu.Unlock()
	a, ok := s.oauth.access[tok]
	return ok && time.Now().Before(a.expires)
}

func (s *Server) oauthRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+MetadataPath, s.oauthMetadata)
	mux.HandleFunc("GET "+AuthorizePath, s.oauthAuthorize)
	mux.HandleFunc("GET "+DevicePath, s.oauthDevicePage)
	mux.HandleFunc("POST "+DevicePath, s.oauthDeviceVerify)
	mux.HandleFunc("POST "+TokenPath, s.oauthToken)
	mux.HandleFunc("POST "+DeviceAuthPath, s.oauthDeviceAuth)
	mux.HandleFunc("POST "+RevokePath, s.oauthRevoke)
}

// origin is the scheme and host the request reached, which the metadata
// and the verification URI are built on.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (s *Server) oauthMetadata(w http.ResponseWriter, r *http.Request) {
	o := origin(r)
	writeJSON(w, 200, map[string]any{
		"issuer":                                o,
		"authorization_endpoint":                o + AuthorizePath,
		"token_endpoint":                        o + TokenPath,
		"device_authorization_endpoint":         o + DeviceAuthPath,
		"revocation_endpoint":                   o + RevokePath,
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", deviceCodeGrant},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
		"scopes_supported":                      []string{"USE_TOOLS"},
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// oauthError answers a token or device request with an RFC 6749 error.
func oauthError(w http.ResponseWriter, code int, e, desc string) {
	writeJSON(w, code, map[string]string{"error": e, "error_description": desc})
}

// validRedirect accepts http://127.0.0.1:PORT/callback, [::1] or localhost,
// any port (RFC 8252 §7.3: loopback redirects may use any port, which
// covers hostlink's 41899-41910 range and the first-free fallback).
func validRedirect(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Path != "/callback" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.Port() == "" {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// oauthAuthorize is the authorization endpoint. It never redirects to an
// unchecked URI: a bad client or redirect gets an error page instead.
func (s *Server) oauthAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.oauth.mu.Lock()
	s.oauth.init()
	cfg := s.oauth.cfg
	s.oauth.mu.Unlock()
	redirect := q.Get("redirect_uri")
	if q.Get("client_id") != cfg.ClientID || !validRedirect(redirect) {
		page(w, 400, "Authorization failed", "Unknown client or redirect URI.")
		return
	}
	back := func(v url.Values) {
		if st := q.Get("state"); st != "" {
			v.Set("state", st)
		}
		http.Redirect(w, r, redirect+"?"+v.Encode(), http.StatusFound)
	}
	switch {
	case q.Get("response_type") != "code":
		back(url.Values{"error": {"unsupported_response_type"}})
	case q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) < 43:
		back(url.Values{"error": {"invalid_request"}, "error_description": {"PKCE with S256 is required"}})
	case cfg.DenyAuthorization:
		back(url.Values{"error": {"access_denied"}})
	default:
		code := NewToken()
		s.oauth.mu.Lock()
		s.oauth.codes[code] = &authCode{clientID: cfg.ClientID, redirect: redirect, challenge: q.Get("code_challenge"), scope: q.Get("scope"), expires: time.Now().Add(codeTTL)}
		s.oauth.mu.Unlock()
		back(url.Values{"code": {code}})
	}
}

func page(w http.ResponseWriter, code int, title, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1><p>%s</p>\n", html.EscapeString(title), html.EscapeString(title), html.EscapeString(msg))
}

// issue creates an access token and (for a new family) a refresh token.
// The caller holds the lock.
func (o *oauthState) issue(family, scope string) map[string]any {
	if family == "" {
		family = NewToken()
	}
	at, rt := NewToken(), NewToken()
	o.issued = append(o.issued, at, rt)
	o.access[at] = accessToken{family: family, expires: time.Now().Add(o.cfg.AccessTTL)}
	o.refresh[rt] = family
	return map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(o.cfg.AccessTTL.Seconds()), "refresh_token": rt, "scope": scope}
}

// revokeFamily ends every token of a family. The caller holds the lock.
func (o *oauthState) revokeFamily(family string) {
	for t, a := range o.access {
		if a.family == family {
			delete(o.access, t)
		}
	}
	for t, f := range o.refresh {
		if f == family {
			delete(o.refresh, t)
		}
	}
}

func (s *Server) oauthToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, 400, "invalid_request", "bad form")
		return
	}
	f := r.PostForm
	o := &s.oauth
	o.mu.Lock()
	defer o.mu.Unlock()
	o.init()
	if f.Get("client_id") != o.cfg.ClientID {
		oauthError(w, 401, "invalid_client", "unknown client")
		return
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		code := f.Get("code")
		c, ok := o.codes[code]
		if !ok {
			// A replayed code: refuse, and end what it was exchanged for
			// (RFC 6749 §4.1.2).
			if fam, replay := o.used[code]; replay {
				o.revokeFamily(fam)
			}
			oauthError(w, 400, "invalid_grant", "unknown or used code")
			return
		}
		delete(o.codes, code)
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case time.Now().After(c.expires):
			oauthError(w, 400, "invalid_grant", "code expired")
		case f.Get("redirect_uri") != c.redirect:
			oauthError(w, 400, "invalid_grant", "redirect_uri does not match")
		case subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(c.challenge)) != 1:
			oauthError(w, 400, "invalid_grant", "code_verifier does not match")
		default:
			fam := NewToken()
			o.used[code] = fam
			writeJSON(w, 200, o.issue(fam, c.scope))
		}
	case "refresh_token":
		fam, ok := o.refresh[f.Get("refresh_token")]
		if !ok {
			oauthError(w, 400, "invalid_grant", "unknown refresh token")
			return
		}
		// Rotation: the old refresh token is spent.
		delete(o.refresh, f.Get("refresh_token"))
		writeJSON(w, 200, o.issue(fam, f.Get("scope")))
	case deviceCodeGrant:
		d, ok := o.devices[f.Get("device_code")]
		now := time.Now()
		switch {
		case !ok:
			oauthError(w, 400, "invalid_grant", "unknown device code")
		case now.After(d.expires):
			delete(o.devices, f.Get("device_code"))
			oauthError(w, 400, "expired_token", "the device code expired")
		case d.denied:
			delete(o.devices, f.Get("device_code"))
			oauthError(w, 400, "access_denied", "the user denied the request")
		case d.approved:
			delete(o.devices, f.Get("device_code"))
			writeJSON(w, 200, o.issue("", d.scope))
		case now.Sub(d.lastPoll) < time.Duration(o.cfg.DeviceInterval)*time.Second/2:
			d.lastPoll = now
			oauthError(w, 400, "slow_down", "polling too fast")
		default:
			d.lastPoll = now
			oauthError(w, 400, "authorization_pending", "waiting for the user")
		}
	default:
		oauthError(w, 400, "unsupported_grant_type", "")
	}
}

// userCodeAlphabet has no vowels or look-alikes (RFC 8628 §6.1).
const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

func newUserCode() string {
	var b [8]byte
	rand.Read(b[:])
	var sb strings.Builder
	for i, c := range b {
		if i == 4 {
			sb.WriteByte('-')
		}
		sb.WriteByte(userCodeAlphabet[int(c)%len(userCodeAlphabet)])
	}
	return sb.String()
}

func normUserCode(s string) string {
	s = strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", ""))
	if len(s) == 8 {
		s = s[:4] + "-" + s[4:]
	}
	return s
}

func (s *Server) oauthDeviceAuth(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, 400, "invalid_request", "bad form")
		return
	}
	o := &s.oauth
	o.mu.Lock()
	defer o.mu.Unlock()
	o.init()
	if r.PostForm.Get("client_id") != o.cfg.ClientID {
		oauthError(w, 401, "invalid_client", "unknown client")
		return
	}
	dc, uc := NewToken(), newUserCode()
	o.devices[dc] = &deviceGrant{userCode: uc, scope: r.PostForm.Get("scope"), expires: time.Now().Add(deviceTTL)}
	verify := origin(r) + DevicePath
	writeJSON(w, 200, map[string]any{
		"device_code": dc, "user_code": uc, "verification_uri": verify,
		"verification_uri_complete": verify + "?user_code=" + url.QueryEscape(uc),
		"expires_in":                int(deviceTTL.Seconds()), "interval": o.cfg.DeviceInterval,
	})
}

// oauthDevicePage shows the form a user approves a device on.
func (s *Server) oauthDevicePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><title>Connect a device</title><h1>Connect a device</h1>
<form method="post"><label>Code <input name="user_code" value="%s"></label>
<button name="action" value="allow">Allow</button> <button name="action" value="deny">Deny</button></form>
`, html.EscapeString(r.URL.Query().Get("user_code")))
}

// oauthDeviceVerify takes the form: user_code and action=allow|deny.
func (s *Server) oauthDeviceVerify(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		page(w, 400, "Failed", "bad form")
		return
	}
	allow := r.PostForm.Get("action") != "deny"
	if err := s.ApproveDevice(r.PostForm.Get("user_code"), allow); err != nil {
		page(w, 400, "Failed", err.Error())
		return
	}
	if allow {
		page(w, 200, "Device connected", "You can close this window.")
	} else {
		page(w, 200, "Request denied", "The device was not connected.")
	}
}

// oauthRevoke is RFC 7009 revocation: it ends the token's whole family,
// and answers 200 for tokens it does not know.
func (s *Server) oauthRevoke(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, 400, "invalid_request", "bad form")
		return
	}
	o := &s.oauth
	o.mu.Lock()
	defer o.mu.Unlock()
	o.init()
	if r.PostForm.Get("client_id") != o.cfg.ClientID {
		oauthError(w, 401, "invalid_client", "unknown client")
		return
	}
	tok := r.PostForm.Get("token")
	if fam, ok := o.refresh[tok]; ok {
		o.revokeFamily(fam)
	} else if a, ok := o.access[tok]; ok {
		o.revokeFamily(a.family)
	}
	w.WriteHeader(http.StatusOK)
}

// executorAuthorized reports whether an executor's connection presents the
// fixed token or a live OAuth access token. OAuth tokens open only the
// executor endpoints, never the operator's /api.
func (s *Server) executorAuthorized(r *http.Request) bool {
	if s.authorized(r) {
		return true
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && s.oauthAccepts(tok)
}

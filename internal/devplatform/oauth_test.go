package devplatform

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func oauthServer(t *testing.T, cfg OAuthConfig) (*Server, string) {
	t.Helper()
	s := New(NewToken(), Config{})
	s.SetOAuthConfig(cfg)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: s.Handler()}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return s, "http://" + ln.Addr().String()
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func challenge(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

const verifier = "a-verifier-of-at-least-forty-three-characters-long-xyz"

// authorize asks for a code and returns the redirect's query (or nil) and
// the status.
func authorize(t *testing.T, base string, q url.Values) (int, url.Values) {
	t.Helper()
	resp, err := noRedirect.Get(base + AuthorizePath + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return resp.StatusCode, nil
	}
	u, _ := url.Parse(resp.Header.Get("Location"))
	return resp.StatusCode, u.Query()
}

func authQuery(redirect string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {DefaultClientID}, "redirect_uri": {redirect},
		"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}, "state": {"st"}, "scope": {"USE_TOOLS"}}
}

func token(t *testing.T, base string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(base+TokenPath, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func TestAuthorizeEndpoint(t *testing.T) {
	_, base := oauthServer(t, OAuthConfig{})
	const cb = "http://127.0.0.1:41899/callback"
	mod := func(k, v string) url.Values {
		q := authQuery(cb)
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
		return q
	}
	tests := []struct {
		name   string
		q      url.Values
		status int
		errStr string
	}{
		{"valid", authQuery(cb), 302, ""},
		{"localhost any port", authQuery("http://localhost:50123/callback"), 302, ""},
		{"unknown client", mod("client_id", "evil"), 400, ""},
		{"remote redirect", authQuery("http://evil.example:41899/callback"), 400, ""},
		{"https redirect", authQuery("https://127.0.0.1:41899/callback"), 400, ""},
		{"other path", authQuery("http://127.0.0.1:41899/steal"), 400, ""},
		{"no port", authQuery("http://127.0.0.1/callback"), 400, ""},
		{"no PKCE", mod("code_challenge", ""), 302, "invalid_request"},
		{"plain PKCE", mod("code_challenge_method", "plain"), 302, "invalid_request"},
		{"token response type", mod("response_type", "token"), 302, "unsupported_response_type"},
	}
	for _, tc := range tests {
		status, q := authorize(t, base, tc.q)
		if status != tc.status {
			t.Errorf("%s: status %d", tc.name, status)
			continue
		}
		if status != 302 {
			continue
		}
		if q.Get("state") != "st" || q.Get("error") != tc.errStr || (tc.errStr == "") != (q.Get("code") != "") {
			t.Errorf("%s: redirect %v", tc.name, q)
		}
	}
}

func TestTokenEndpoint(t *testing.T) {
	s, base := oauthServer(t, OAuthConfig{})
	const cb = "http://127.0.0.1:41900/callback"
	code := func() string {
		_, q := authorize(t, base, authQuery(cb))
		return q.Get("code")
	}
	exchange := func(c, redirect, v, client string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {redirect}, "code_verifier": {v}, "client_id": {client}}
	}
	tests := []struct {
		name   string
		form   url.Values
		status int
		errStr string
	}{
		{"wrong verifier", exchange(code(), cb, verifier+"x", DefaultClientID), 400, "invalid_grant"},
		{"wrong redirect", exchange(code(), "http://127.0.0.1:41901/callback", verifier, DefaultClientID), 400, "invalid_grant"},
		{"unknown client", exchange(code(), cb, verifier, "evil"), 401, "invalid_client"},
		{"unknown code", exchange("nope", cb, verifier, DefaultClientID), 400, "invalid_grant"},
		{"unknown grant", url.Values{"grant_type": {"password"}, "client_id": {DefaultClientID}}, 400, "unsupported_grant_type"},
		{"unknown refresh", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {DefaultClientID}}, 400, "invalid_grant"},
		{"unknown device code", url.Values{"grant_type": {deviceCodeGrant}, "device_code": {"x"}, "client_id": {DefaultClientID}}, 400, "invalid_grant"},
	}
	for _, tc := range tests {
		status, m := token(t, base, tc.form)
		if status != tc.status || m["error"] != tc.errStr {
			t.Errorf("%s: %d %v", tc.name, status, m)
		}
	}
	if a, r := s.OAuthTokens(); a != 0 || r != 0 {
		t.Fatalf("failed exchanges issued tokens: %d %d", a, r)
	}
	// A good exchange, then refresh rotation: the spent refresh token is refused.
	status, m := token(t, base, exchange(code(), cb, verifier, DefaultClientID))
	if status != 200 || m["token_type"] != "Bearer" || m["access_token"] == nil {
		t.Fatalf("exchange: %d %v", status, m)
	}
	rt := m["refresh_token"].(string)
	refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {DefaultClientID}}
	if status, m = token(t, base, refresh); status != 200 || m["refresh_token"] == rt {
		t.Fatalf("refresh: %d %v", status, m)
	}
	if status, _ = token(t, base, refresh); status != 400 {
		t.Fatalf("a spent refresh token was accepted: %d", status)
	}
	// The access token opens the executor endpoint but never the operator API.
	req, _ := http.NewRequest("GET", base+"/api/peers", nil)
	req.Header.Set("Authorization", "Bearer "+m["access_token"].(string))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("an OAuth token opened /api/peers: %d", resp.StatusCode)
	}
	// Revocation: unknown tokens are fine (RFC 7009); a known one ends its family.
	for _, tok := range []string{"unknown", m["refresh_token"].(string)} {
		resp, err := http.PostForm(base+RevokePath, url.Values{"token": {tok}, "client_id": {DefaultClientID}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("revoke %s: %d", tok, resp.StatusCode)
		}
	}
	if a, r := s.OAuthTokens(); a != 0 || r != 0 {
		t.Fatalf("after revocation: %d access, %d refresh", a, r)
	}
}

func TestDeviceEndpoints(t *testing.T) {
	s, base := oauthServer(t, OAuthConfig{DeviceInterval: 2})
	resp, err := http.PostForm(base+DeviceAuthPath, url.Values{"client_id": {DefaultClientID}, "scope": {"USE_TOOLS"}})
	if err != nil {
		t.Fatal(err)
	}
	var da map[string]any
	json.NewDecoder(resp.Body).Decode(&da)
	resp.Body.Close()
	uc, _ := da["user_code"].(string)
	if len(uc) != 9 || uc[4] != '-' || !strings.HasPrefix(da["verification_uri"].(string), base+DevicePath) || da["interval"].(float64) != 2 {
		t.Fatalf("device authorization: %v", da)
	}
	poll := url.Values{"grant_type": {deviceCodeGrant}, "device_code": {da["device_code"].(string)}, "client_id": {DefaultClientID}}
	if _, m := token(t, base, poll); m["error"] != "authorization_pending" {
		t.Fatalf("first poll: %v", m)
	}
	if _, m := token(t, base, poll); m["error"] != "slow_down" {
		t.Fatalf("fast poll: %v", m)
	}
	// The page shows the code; a wrong code is refused; the right one approves.
	page, _ := http.Get(base + DevicePath + "?user_code=" + url.QueryEscape(uc))
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if !strings.Contains(string(body), uc) {
		t.Fatalf("verification page: %s", body)
	}
	if err := s.ApproveDevice("BBBB-BBBB", true); err == nil {
		t.Fatal("approved an unknown user code")
	}
	if err := s.ApproveDevice(strings.ToLower(strings.ReplaceAll(uc, "-", "")), true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // past half the interval: not slow_down
	if status, m := token(t, base, poll); status != 200 || m["access_token"] == nil {
		t.Fatalf("approved poll: %d %v", status, m)
	}
	if _, m := token(t, base, poll); m["error"] != "invalid_grant" {
		t.Fatalf("a device code was used twice: %v", m)
	}
}

func TestMetadata(t *testing.T) {
	_, base := oauthServer(t, OAuthConfig{})
	resp, err := http.Get(base + MetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	for k, want := range map[string]string{"issuer": base, "authorization_endpoint": base + AuthorizePath, "token_endpoint": base + TokenPath,
		"device_authorization_endpoint": base + DeviceAuthPath, "revocation_endpoint": base + RevokePath} {
		if m[k] != want {
			t.Errorf("%s = %v, want %s", k, m[k], want)
		}
	}
}

package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/credstore"
	"github.com/hostlink/hostlink/internal/pairing"
)

// controlPath is the protocol's control endpoint on a platform.
const controlPath = "/ws/local-executor"

// tokenEnv is the link's environment token (see package daemon).
const tokenEnv = "HOSTLINK_PLATFORM_TOKEN"

// explicitToken reports whether the link is given a token directly.
func (e *env) explicitToken() bool {
	return e.cfg.Link.TokenFile != "" || strings.TrimSpace(e.o.Getenv(tokenEnv)) != ""
}

// needsPairing is true when the configured link will use the pairing.
func (e *env) needsPairing() bool { return e.cfg.Link.URL != "" && !e.explicitToken() }

// pairs reports whether this hostlink uses the credential store: a
// platform link or a companion listener is configured, or the encrypted
// file holds credentials.
func (e *env) pairs() bool {
	_, err := os.Stat(filepath.Join(e.dirs.State, credstore.FileName))
	return e.cfg.Link.URL != "" || e.cfg.Companion.Listen != "" || err == nil
}

// checkCredentials checks the credential backend and the pairing in it.
// Only pairing needs them: for a hostlink that does not pair, a missing
// keychain or pairing is said, not warned about.
func (e *env) checkCredentials(ctx context.Context) *credstore.Store {
	st, err := credstore.Open(credstore.Options{StateDir: e.dirs.State, Getenv: e.o.Getenv})
	if err != nil {
		if !e.pairs() {
			e.add("credential store", OK, "not needed: no platform link is configured (pairing would need one: "+err.Error()+")", "")
			return nil
		}
		status := Warn
		if e.needsPairing() {
			status = Fail
		}
		e.add("credential store", status, err.Error(), "start a keychain (Secret Service on Linux), or set "+credstore.PassphraseEnv+" for the encrypted file")
		return nil
	}
	e.add("credential store", OK, st.Describe(), "")
	c, err := pairing.Status(ctx, st)
	switch {
	case errors.Is(err, pairing.ErrNotPaired) && !e.pairs():
		e.add("pairing", OK, "not paired: no platform link is configured (hostlink pair connects one)", "")
	case errors.Is(err, pairing.ErrNotPaired):
		status := Warn
		if e.needsPairing() {
			status = Fail
		}
		e.add("pairing", status, "not paired with a platform", "hostlink pair --platform https://your-platform (or --device without a browser)")
	case err != nil:
		e.add("pairing", Fail, err.Error(), "hostlink unpair --local, then hostlink pair --platform URL")
	default:
		e.add("pairing", OK, fmt.Sprintf("paired with %s since %s; access token valid until %s, refreshed automatically",
			c.Platform, c.Paired.Format(time.DateOnly), c.Expiry.Local().Format(time.DateTime)), "")
		return st
	}
	return nil
}

// linkURL is the control endpoint to check.
func (e *env) linkURL(st *credstore.Store) string {
	if e.o.Platform != "" {
		return e.o.Platform
	}
	if e.cfg.Link.URL != "" {
		return e.cfg.Link.URL
	}
	if st != nil {
		if c, err := pairing.Status(context.Background(), st); err == nil {
			return "ws" + strings.TrimPrefix(c.Platform, "http") + controlPath
		}
	}
	return ""
}

// checkLink checks that the platform answers and accepts the token: a plain
// GET on the WebSocket endpoint with the bearer token is refused (401/403)
// for a bad token and otherwise asks for an upgrade, so the handshake is
// never started and the platform sees no executor connection.
func (e *env) checkLink(ctx context.Context, st *credstore.Store) {
	url := e.linkURL(st)
	if url == "" {
		e.add("platform link", OK, "not configured (link.url is empty and hostlink is not paired)", "")
		return
	}
	origin, err := pairing.Origin(url)
	if err != nil {
		e.add("platform link", Fail, err.Error(), "set [link] url to wss://… (ws:// only to loopback) in "+e.configPath)
		return
	}
	httpURL := "http" + strings.TrimPrefix(url, "ws")
	var tok string
	var src *pairing.Source
	switch {
	case e.cfg.Link.TokenFile != "":
		b, err := os.ReadFile(e.cfg.Link.TokenFile)
		if err != nil || strings.TrimSpace(string(b)) == "" {
			e.add("platform link", Fail, fmt.Sprintf("token file %s: %v", e.cfg.Link.TokenFile, err), "write the platform token to the file, or clear [link] token_file in "+e.configPath+" and pair")
			return
		}
		tok = strings.TrimSpace(string(b))
	case strings.TrimSpace(e.o.Getenv(tokenEnv)) != "":
		tok = strings.TrimSpace(e.o.Getenv(tokenEnv))
	case st != nil:
		if src, err = pairing.NewSource(ctx, st, e.o.HTTPClient); err == nil && src.Platform() != origin {
			e.add("platform link", Fail, "paired with "+src.Platform()+", but the link goes to "+origin, "hostlink pair --platform "+origin)
			return
		}
		if err == nil {
			tok, err = src.Token(ctx)
		}
		if err != nil {
			e.add("platform link", Fail, err.Error(), "hostlink pair --platform "+origin)
			return
		}
	default:
		e.add("platform link", Fail, "no token for "+origin, "hostlink pair --platform "+origin)
		return
	}
	code, err := e.probe(ctx, httpURL, tok)
	if err == nil && (code == 401 || code == 403) && src != nil {
		if tok, err = src.Refresh(ctx, tok); err == nil {
			code, err = e.probe(ctx, httpURL, tok)
		}
	}
	switch {
	case err != nil:
		e.add("platform link", Fail, fmt.Sprintf("%s: %v", origin, err), "check the URL, the network and that the platform is up")
	case code == 401 || code == 403:
		e.add("platform link", Fail, fmt.Sprintf("%s refused the token (HTTP %d)", origin, code), "hostlink pair --platform "+origin)
	case code >= 500:
		e.add("platform link", Warn, fmt.Sprintf("%s answered HTTP %d", origin, code), "the platform has a problem; hostlink keeps retrying")
	default:
		e.add("platform link", OK, origin+" reachable, token accepted", "")
	}
}

func (e *env) probe(ctx context.Context, url, tok string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := e.o.HTTPClient.Do(req)
	if err != nil {
		return 0, errors.Unwrap(err) // the url.Error's cause; never the header
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

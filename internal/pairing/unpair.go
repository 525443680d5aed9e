package pairing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/hostlink/hostlink/internal/credstore"
)

// UnpairResult says what Unpair did.
type UnpairResult struct {
	Platform string
	Revoked  bool // the platform revoked the tokens
}

// Unpair revokes the tokens at the platform (RFC 7009), when it supports
// revocation, and then deletes them locally. If revocation fails the local
// tokens are kept, so it can be retried rather than reported as done;
// local skips the platform and only deletes.
func Unpair(ctx context.Context, st *credstore.Store, hc *http.Client, local bool) (*UnpairResult, error) {
	c, err := Load(ctx, st)
	if err != nil {
		return nil, err
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	res := &UnpairResult{Platform: c.Platform}
	if !local && c.RevokeURL != "" {
		for _, t := range []struct{ tok, hint string }{{c.RefreshToken, "refresh_token"}, {c.AccessToken, "access_token"}} {
			if t.tok == "" {
				continue
			}
			if err := revoke(ctx, hc, c, t.tok, t.hint); err != nil {
				return nil, fmt.Errorf("%w; the local tokens are kept: retry, or `hostlink unpair --local` to only delete them here", err)
			}
		}
		res.Revoked = true
	}
	if err := st.Delete(ctx, CredentialName); err != nil {
		return nil, err
	}
	return res, nil
}

func revoke(ctx context.Context, hc *http.Client, c *Credential, tok, hint string) error {
	form := url.Values{"token": {tok}, "token_type_hint": {hint}, "client_id": {c.ClientID}}
	req, err := http.NewRequestWithContext(ctx, "POST", c.RevokeURL, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		// The error names the URL, never the form with the token.
		var ue *url.Error
		if errors.As(err, &ue) {
			return fmt.Errorf("revoking the %s at %s: %v", hint, c.RevokeURL, ue.Err)
		}
		return fmt.Errorf("revoking the %s: %w", hint, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("revoking the %s: the platform answered HTTP %d", hint, resp.StatusCode)
	}
	return nil
}

// Status describes the stored pairing without its tokens, for doctor and
// the CLI; ErrNotPaired when there is none.
func Status(ctx context.Context, st *credstore.Store) (*Credential, error) {
	c, err := Load(ctx, st)
	if err != nil {
		return nil, err
	}
	safe := *c
	safe.AccessToken, safe.RefreshToken = "", ""
	return &safe, nil
}

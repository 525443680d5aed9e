package pairing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/hostlink/hostlink/internal/credstore"
)

// RefreshSkew is how long before expiry the access token is renewed.
const RefreshSkew = 2 * time.Minute

// Source supplies the stored access token to the platform link (it
// implements link.TokenSource), refreshing it before it expires and when
// the platform refuses it, and saving the renewed tokens.
type Source struct {
	st *credstore.Store
	hc *http.Client
	// OnRefresh, if set, is told after each successful refresh (for the
	// audit log; it gets no token).
	OnRefresh func()
	now       func() time.Time

	mu   sync.Mutex
	cred *Credential
}

// NewSource loads the pairing. hc talks to the token endpoint (nil: a
// client with a timeout).
func NewSource(ctx context.Context, st *credstore.Store, hc *http.Client) (*Source, error) {
	c, err := Load(ctx, st)
	if err != nil {
		return nil, err
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Source{st: st, hc: hc, cred: c, now: time.Now}, nil
}

// Platform is the origin hostlink is paired with.
func (s *Source) Platform() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cred.Platform
}

// Token returns the access token, refreshed first when it expires within
// RefreshSkew.
func (s *Source) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cred
	if !c.Expiry.IsZero() && s.now().Add(RefreshSkew).After(c.Expiry) && c.RefreshToken != "" {
		if err := s.refresh(ctx); err != nil {
			return "", err
		}
	}
	return s.cred.AccessToken, nil
}

// Refresh renews the token after the platform refused rejected. If the
// token has changed since (another connection refreshed it, or the user
// paired again), the current one is returned without a refresh.
func (s *Source) Refresh(ctx context.Context, rejected string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stored, err := Load(ctx, s.st); err == nil {
		s.cred = stored
	}
	if s.cred.AccessToken != rejected {
		return s.cred.AccessToken, nil
	}
	if err := s.refresh(ctx); err != nil {
		return "", err
	}
	return s.cred.AccessToken, nil
}

// ErrRefreshRefused means the platform no longer accepts the refresh
// token: the user must pair again.
var ErrRefreshRefused = errors.New("the platform refused the refresh token")

// refresh renews the tokens with the refresh token and stores them. The
// caller holds s.mu.
func (s *Source) refresh(ctx context.Context) error {
	c := s.cred
	if c.RefreshToken == "" {
		return fmt.Errorf("%w (none stored): run `hostlink pair --platform %s`", ErrRefreshRefused, c.Platform)
	}
	cfg := &oauth2.Config{ClientID: c.ClientID, Endpoint: oauth2.Endpoint{TokenURL: c.TokenURL, AuthStyle: oauth2.AuthStyleInParams}}
	hctx := context.WithValue(ctx, oauth2.HTTPClient, s.hc)
	t, err := cfg.TokenSource(hctx, &oauth2.Token{RefreshToken: c.RefreshToken}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			return fmt.Errorf("%w: run `hostlink pair --platform %s`", ErrRefreshRefused, c.Platform)
		}
		return fmt.Errorf("refreshing the access token: %w", err)
	}
	next := *c
	next.update(t)
	if err := Save(ctx, s.st, &next); err != nil {
		return err
	}
	s.cred = &next
	if s.OnRefresh != nil {
		s.OnRefresh()
	}
	return nil
}

package pairing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/oauth2"

	"github.com/hostlink/hostlink/internal/credstore"
)

// CredentialName is the credential store item holding the pairing.
const CredentialName = "platform"

// ErrNotPaired is returned when no pairing is stored.
var ErrNotPaired = errors.New("hostlink is not paired with a platform: run `hostlink pair --platform URL`")

// Credential is one pairing: whom hostlink is paired with and the tokens.
// It is stored as a whole in the credential store.
type Credential struct {
	Platform     string    `json:"platform"` // the platform's origin, https://host[:port]
	ClientID     string    `json:"client_id"`
	TokenURL     string    `json:"token_url"`
	RevokeURL    string    `json:"revoke_url,omitempty"`
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scope        string    `json:"scope,omitempty"`
	Paired       time.Time `json:"paired"`
}

// String never shows the tokens, so a credential cannot leak into a log
// through %v.
func (c *Credential) String() string {
	return fmt.Sprintf("pairing with %s (client %s, access token expires %s)", c.Platform, c.ClientID, c.Expiry.Format(time.RFC3339))
}

// LogValue keeps tokens out of structured logs too.
func (c *Credential) LogValue() any { return c.String() }

// update takes a new token response; a refresh that returns no new refresh
// token keeps the old one.
func (c *Credential) update(t *oauth2.Token) {
	c.AccessToken = t.AccessToken
	if t.RefreshToken != "" {
		c.RefreshToken = t.RefreshToken
	}
	c.Expiry = t.Expiry
	if s, ok := t.Extra("scope").(string); ok && s != "" {
		c.Scope = s
	}
}

// Load reads the stored pairing, or ErrNotPaired.
func Load(ctx context.Context, st *credstore.Store) (*Credential, error) {
	b, err := st.Get(ctx, CredentialName)
	if errors.Is(err, credstore.ErrNotFound) {
		return nil, ErrNotPaired
	}
	if err != nil {
		return nil, fmt.Errorf("reading the pairing from the %s: %w", st.Describe(), err)
	}
	var c Credential
	if err := json.Unmarshal(b, &c); err != nil || c.AccessToken == "" || c.TokenURL == "" {
		return nil, errors.New("the stored pairing is damaged: run `hostlink unpair --local` and pair again")
	}
	return &c, nil
}

// Save stores the pairing, replacing any previous one.
func Save(ctx context.Context, st *credstore.Store, c *Credential) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := st.Set(ctx, CredentialName, b); err != nil {
		return fmt.Errorf("storing the pairing in the %s: %w", st.Describe(), err)
	}
	return nil
}

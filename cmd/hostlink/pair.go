package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hostlink/hostlink/internal/credstore"
	"github.com/hostlink/hostlink/internal/pairing"
	"github.com/hostlink/hostlink/internal/paths"
)

type pairCmd struct {
	Platform  string        `help:"The platform: https://host (or the link's wss:// URL; http:// only to loopback)." required:""`
	Device    bool          `help:"Pair with a code entered on another device, for machines without a browser (RFC 8628)."`
	NoBrowser bool          `help:"Print the sign-in URL instead of opening a browser."`
	ClientID  string        `help:"OAuth client id the platform registered for hostlink." default:"hostlink" env:"HOSTLINK_OAUTH_CLIENT_ID"`
	Timeout   time.Duration `help:"How long to wait for you to approve." default:"5m"`
}

// credentialStore opens the credential store in hostlink's state dir.
func credentialStore() (*credstore.Store, error) {
	dirs, err := paths.Resolve()
	if err != nil {
		return nil, err
	}
	return credstore.Open(credstore.Options{StateDir: dirs.State})
}

func (p *pairCmd) Run(ctx context.Context) error {
	st, err := credentialStore()
	if err != nil {
		return err
	}
	o := pairing.Options{
		Platform: p.Platform, ClientID: p.ClientID, Store: st, Timeout: p.Timeout,
		Prompt: func(msg string) { fmt.Fprintln(os.Stderr, msg) },
	}
	if old, err := pairing.Status(ctx, st); err == nil {
		fmt.Fprintf(os.Stderr, "hostlink is paired with %s; pairing again replaces that pairing (its tokens are not revoked: `hostlink unpair` first does that).\n", old.Platform)
	}
	if !p.NoBrowser {
		o.OpenBrowser = pairing.OpenBrowser
	}
	var c *pairing.Credential
	if p.Device {
		c, err = pairing.Device(ctx, o)
	} else {
		c, err = pairing.Browser(ctx, o)
	}
	if err != nil {
		return err
	}
	fmt.Printf("Paired with %s. The tokens are in the %s.\n", c.Platform, st.Describe())
	return nil
}

type unpairCmd struct {
	Local bool `help:"Only delete the local tokens, without revoking them at the platform."`
}

func (u *unpairCmd) Run(ctx context.Context) error {
	st, err := credentialStore()
	if err != nil {
		return err
	}
	res, err := pairing.Unpair(ctx, st, nil, u.Local)
	if errors.Is(err, pairing.ErrNotPaired) {
		fmt.Println("hostlink is not paired; nothing to do.")
		return nil
	}
	if err != nil {
		return err
	}
	if res.Revoked {
		fmt.Printf("Revoked the tokens at %s and deleted them from the %s.\n", res.Platform, st.Describe())
	} else {
		fmt.Printf("Deleted the tokens for %s from the %s (not revoked at the platform).\n", res.Platform, st.Describe())
	}
	return nil
}

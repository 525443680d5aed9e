package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hostlink/hostlink/internal/companion"
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
	Local bool `help:"Only delete local credentials: revoke nothing at the platform or at a companion's runtime."`
}

// Run revokes every pairing this machine holds: the platform's tokens,
// the companions paired with this hostlink as their runtime, and this
// hostlink's own credentials as a companion of other runtimes. A
// container without a credential store still revokes its companions.
func (u *unpairCmd) Run(ctx context.Context) error {
	did := false
	st, serr := credentialStore()
	if serr == nil {
		res, err := pairing.Unpair(ctx, st, nil, u.Local)
		switch {
		case errors.Is(err, pairing.ErrNotPaired):
		case err != nil:
			return err
		case res.Revoked:
			fmt.Printf("Revoked the tokens at %s and deleted them from the %s.\n", res.Platform, st.Describe())
			did = true
		default:
			fmt.Printf("Deleted the tokens for %s from the %s (not revoked at the platform).\n", res.Platform, st.Describe())
			did = true
		}
		creds := companion.NewCredentials(st)
		addrs, err := creds.Runtimes(ctx)
		if err != nil {
			return err
		}
		for _, addr := range addrs {
			msg, err := unpairFromRuntime(ctx, creds, addr, u.Local)
			if err != nil {
				return err
			}
			fmt.Println(msg)
			did = true
		}
	}
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	if companion.PairingsExist(dirs.State) {
		p, err := companion.OpenPairings(dirs.State)
		if err != nil {
			return err
		}
		defer p.Close()
		n, err := p.Revoke("")
		if err != nil {
			return err
		}
		if n > 0 {
			fmt.Printf("Revoked %d companion pairing(s); a connected companion is disconnected within seconds.\n", n)
			did = true
		}
	}
	if serr != nil {
		if did {
			fmt.Fprintf(os.Stderr, "Platform and companion credentials were not checked: %v\n", serr)
			return nil
		}
		return serr
	}
	if !did {
		fmt.Println("hostlink is not paired with a platform, a companion or a runtime; nothing to do.")
	}
	return nil
}

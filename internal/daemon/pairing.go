package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/credstore"
	"github.com/hostlink/hostlink/internal/link"
	"github.com/hostlink/hostlink/internal/pairing"
)

// linkAuth decides how the link authenticates: an explicit token (file or
// $HOSTLINK_PLATFORM_TOKEN) wins; otherwise the pairing stored by
// `hostlink pair`, whose tokens are refreshed as they expire or are
// refused, each refresh recorded in the audit log (without the token).
func (d *Daemon) linkAuth(ctx context.Context, url, file string) (string, link.TokenSource, error) {
	if file != "" || strings.TrimSpace(os.Getenv(TokenEnv)) != "" {
		tok, err := linkToken(file)
		return tok, nil, err
	}
	st, err := credstore.Open(credstore.Options{StateDir: d.Dirs.State})
	if err != nil {
		return "", nil, fmt.Errorf("platform link: no token file or %s, and the pairing cannot be read: %w", TokenEnv, err)
	}
	src, err := pairing.NewSource(ctx, st, nil)
	if err != nil {
		return "", nil, fmt.Errorf("platform link: %w (or give --platform-token-file or %s)", err, TokenEnv)
	}
	want, err := pairing.Origin(url)
	if err != nil {
		return "", nil, err
	}
	if src.Platform() != want {
		return "", nil, fmt.Errorf("platform link: hostlink is paired with %s, not %s: run `hostlink pair --platform %s`", src.Platform(), want, want)
	}
	src.OnRefresh = func() {
		slog.Info("platform token refreshed", "platform", want)
		if err := d.Audit.Append(audit.Record{Transport: audit.Link, Op: "token_refreshed", Code: "OK", Details: map[string]any{"platform": want}}); err != nil {
			slog.Warn("a token refresh is not in the audit log", "err", err)
		}
	}
	return "", src, nil
}

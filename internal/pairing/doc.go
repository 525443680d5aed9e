// Package pairing connects hostlink to a platform account with OAuth 2.0
// and keeps the resulting tokens fresh.
//
// Two ways to pair, both for a public client (no client secret):
//
//   - Authorization code with PKCE (S256) and a state check: hostlink
//     opens the platform's authorization page in the browser and waits for
//     the redirect on a loopback listener, 127.0.0.1 only, on port 41899 or
//     the first free port through 41910 (then any free port). The listener
//     accepts exactly one valid callback, answers it with a plain
//     success or failure page, and gives up after a timeout.
//   - The device authorization grant (RFC 8628) for machines without a
//     browser: hostlink prints a URL and a code to enter elsewhere, and
//     polls.
//
// The platform's endpoints come from its RFC 8414 metadata. The tokens
// (access, refresh, expiry) and the endpoints to renew and revoke them are
// one Credential, kept in the credential store (package credstore), never
// in a plain file or a log. Source hands the link the access token,
// refreshing it shortly before it expires and whenever the platform
// refuses it; Unpair revokes the tokens at the platform and only then
// deletes them locally.
package pairing

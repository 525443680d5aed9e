// Package credstore keeps hostlink's platform credentials (OAuth access and
// refresh tokens) out of plain files.
//
// The first choice is the OS keychain through github.com/zalando/go-keyring:
// Keychain Services on macOS, the Secret Service (gnome-keyring, KWallet)
// over the D-Bus session bus on Linux, Credential Manager on Windows. Where
// no keychain answers (a headless Linux box, WSL2, no session bus) the store
// falls back to tokens.enc in the state directory: XChaCha20-Poly1305 with a
// key derived by Argon2id from the KEYCHAIN_PASSPHRASE environment variable.
// Without a keychain and without a passphrase Open refuses, with
// instructions; nothing is ever written in plaintext.
//
// Store.Backend says which backend is in use, so `hostlink doctor` and
// `hostlink pair` can tell the user where their tokens live.
package credstore

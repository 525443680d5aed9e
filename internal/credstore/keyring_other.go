//go:build !linux && !darwin && !windows

package credstore

// keychainName names the keychain go-keyring uses on other Unix systems.
const keychainName = "Secret Service"

// systemKeyring returns go-keyring's client; Open probes it.
func systemKeyring(func(string) string) (Keyring, error) { return osKeyring{}, nil }

package credstore

// keychainName names the macOS keychain.
const keychainName = "macOS Keychain"

// systemKeyring returns the login keychain, reached through /usr/bin/security.
func systemKeyring(func(string) string) (Keyring, error) { return osKeyring{}, nil }

package credstore

// keychainName names the Windows keychain.
const keychainName = "Windows Credential Manager"

// systemKeyring returns Credential Manager. Its generic credentials hold at
// most 2560 bytes each, which the token record stays well under.
func systemKeyring(func(string) string) (Keyring, error) { return osKeyring{}, nil }

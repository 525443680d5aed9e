package credstore

import (
	"errors"

	"github.com/zalando/go-keyring"
)

// osKeyring is the system keychain through go-keyring, with its not-found
// error translated.
type osKeyring struct{}

func (osKeyring) Get(service, user string) (string, error) {
	v, err := keyring.Get(service, user)
	return v, translate(err)
}

func (osKeyring) Set(service, user, secret string) error {
	return translate(keyring.Set(service, user, secret))
}

func (osKeyring) Delete(service, user string) error {
	return translate(keyring.Delete(service, user))
}

func translate(err error) error {
	if errors.Is(err, keyring.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

package sandbox

import (
	"errors"
	"fmt"
	"os"

	"github.com/hostlink/hostlink/internal/private"
)

// checkPrivateDir returns an error unless dir itself (not a link or
// junction) is a directory whose security descriptor gives only this
// user, SYSTEM and the administrators access (private.Check).
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&(os.ModeSymlink|os.ModeIrregular) != 0:
		return errors.New("it is a link")
	case !fi.IsDir():
		return fmt.Errorf("it is not a directory (mode %v)", fi.Mode())
	}
	return private.Check(dir)
}

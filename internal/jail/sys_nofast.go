//go:build !linux

package jail

import "errors"

// errNoFastPath: this OS cannot resolve a path beneath a handle in one
// call (openBeneath), so walks always go one component at a time.
var errNoFastPath = errors.New("no single-call resolution")

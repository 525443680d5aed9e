package desktop

import "slices"

// Supports reports whether this host's desktop can do what operation op
// needs: the operations are registered on every OS, but some are not
// implemented on every one (unsupported, per OS). The platform link asks
// before it advertises a feature; a call still gets FEATURE_NOT_SUPPORTED.
func (s *Service) Supports(op string) bool { return !slices.Contains(unsupported, op) }

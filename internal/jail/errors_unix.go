//go:build !windows

package jail

func isNotEmpty(error) bool    { return false }
func isInvalidName(error) bool { return false }

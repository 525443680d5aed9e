// Package version holds hostlink's version string.
package version

// Version is the hostlink release version. Release builds set it with
//
//	go build -ldflags "-X github.com/hostlink/hostlink/internal/version.Version=1.2.3"
//
// It is a var, not a const, because -X can only set package-level string
// variables.
var Version = "0.1.0-dev"

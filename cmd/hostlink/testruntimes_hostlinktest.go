//go:build hostlinktest

package main

import (
	"os"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/fakeruntime"
)

// testRuntimes adds the fake agent runtime when HOSTLINK_TEST_FAKE_RUNTIME
// names its program. Only a test build (go build -tags hostlinktest, as
// the end-to-end tests build hostlink) has it; a release build has no fake
// runtime at all.
func testRuntimes() map[string]agent.Factory {
	prog := os.Getenv("HOSTLINK_TEST_FAKE_RUNTIME")
	if prog == "" {
		return nil
	}
	return map[string]agent.Factory{fakeruntime.Name: func() (agent.Runtime, error) {
		return &fakeruntime.Runtime{Argv: []string{prog}}, nil
	}}
}

//go:build !hostlinktest

package main

import "github.com/hostlink/hostlink/internal/agent"

// testRuntimes are the agent runtimes a test build adds; a release build
// has none (see testruntimes_hostlinktest.go).
func testRuntimes() map[string]agent.Factory { return nil }

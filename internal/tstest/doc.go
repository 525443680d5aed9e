// Package tstest holds the helpers every hostlink test shares: the gate for
// integration tests that need an optional tool, peer or privilege, a poll
// for conditions that another process makes true, and symbolic links on
// every OS (Symlink).
//
// Integration tests skip when what they need is missing, unless
// HOSTLINK_REQUIRE_INTEGRATION is set (as .ci/run sets it): then they fail,
// so that CI cannot pass by skipping them.
package tstest

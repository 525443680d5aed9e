// Package release checks a hostlink release the way its users get it: the
// archives, packages, manifests, checksums, signature and install script of
// a GoReleaser snapshot (.goreleaser.yaml), built twice from one commit by
// .ci/release-check.
//
// The package holds only tests. They read the snapshot from
// HOSTLINK_RELEASE_DIST (the second build from HOSTLINK_RELEASE_DIST2, the
// allowed-signers file of the throw-away signing key from
// HOSTLINK_RELEASE_SIGNERS); without them they skip, or fail when
// HOSTLINK_REQUIRE_INTEGRATION is set. Run them with
//
//	bash .ci/release-check
//
// which builds the snapshots and runs `go test ./internal/release`.
package release

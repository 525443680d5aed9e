#!/bin/sh
# Writes the CycloneDX SBOM of one release binary (GoReleaser's sboms run
# it in dist/):
#
#   sh ../packaging/sbom.sh BINARY DOCUMENT VERSION GOOS GOARCH
#
# cyclonedx-gomod reads the module list the toolchain embedded in the
# binary; -std adds the standard library at the toolchain's version. It
# takes the package URLs' goos/goarch from `go env`, so it runs with the
# binary's own; and it records hashes of its own executable, which differ
# on every machine that built cyclonedx-gomod, so sbomclean removes them.
# Nothing of the machine that makes the SBOM is left in it.
set -eu
bin="$1" doc="$2" version="$3" goos="$4" goarch="$5"
root="$(cd "$(dirname "$0")/.." && pwd)"
GOOS="$goos" GOARCH="$goarch" cyclonedx-gomod bin -json -std -noserial -notimestamp \
	-output "$doc.tmp" -version "$version" "$bin"
(cd "$root" && GOOS="$(go env GOHOSTOS)" GOARCH="$(go env GOHOSTARCH)" CGO_ENABLED=0 go run ./packaging/sbomclean) <"$doc.tmp" >"$doc.clean"
rm -f "$doc.tmp"
mv -f "$doc.clean" "$doc"

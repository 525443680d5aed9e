#!/bin/sh
# Writes what the release packs beside the binary, generated from the CLI
# definition (GoReleaser's before hook runs it with the release's version
# and commit date):
#
#   completions/hostlink.{bash,zsh,fish,ps1}   shell completions
#   manpages/hostlink.1.gz                     the manual page, hostlink(1)
#   packaging/changelog.yml                    the packages' changelog (nFPM's chglog format)
#
#   sh packaging/generate.sh VERSION COMMIT_DATE
#
# The helper binary is built for this machine whatever `go env` says
# (GOOS/GOARCH may name another target on a rebuilder's machine).
set -eu
cd "$(dirname "$0")/.."
version="${1:?usage: generate.sh VERSION COMMIT_DATE}"
date="${2:?usage: generate.sh VERSION COMMIT_DATE}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
pkg=github.com/hostlink/hostlink/internal/version
CGO_ENABLED=0 GOOS="$(go env GOHOSTOS)" GOARCH="$(go env GOHOSTARCH)" go build -trimpath \
	-ldflags "-X $pkg.Version=$version -X $pkg.Date=$date" -o "$tmp/hostlink" ./cmd/hostlink
rm -rf completions manpages
mkdir completions manpages
for sh in bash zsh fish; do
	"$tmp/hostlink" completion "$sh" >"completions/hostlink.$sh"
done
"$tmp/hostlink" completion powershell >completions/hostlink.ps1
# -n: no name or time in the gzip header, so the file is reproducible.
"$tmp/hostlink" manpage | gzip -9n >manpages/hostlink.1.gz
# The packages' version: a pre-release's "-" is "~" (it sorts before the
# release), and -1 is the packaging revision (.goreleaser.yaml's release).
pkgversion="$(printf '%s' "$version" | sed 's/-/~/')-1"
cat >packaging/changelog.yml <<CHANGELOG
- semver: $pkgversion
  date: $date
  packager: The hostlink Authors <hostlink@users.noreply.github.com>
  deb:
    urgency: low
    distributions: [stable]
  changes:
    - note: "Release $version (notes: the GitHub release v$version)"
CHANGELOG

#!/bin/sh
# Writes completions/hostlink.{bash,zsh,fish} from the CLI definition, for the
# release archives and packages (GoReleaser's before hook runs it).
set -eu
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/hostlink" ./cmd/hostlink
rm -rf completions
mkdir completions
for sh in bash zsh fish; do
	"$tmp/hostlink" completion "$sh" >"completions/hostlink.$sh"
done

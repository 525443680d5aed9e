// Command fakeagent is the deterministic agent runtime hostlink's tests
// drive (see package fakeruntime). It is never part of a release.
package main

import (
	"os"

	"github.com/hostlink/hostlink/internal/agent/fakeruntime"
)

func main() { os.Exit(fakeruntime.Main(os.Stdin, os.Stdout)) }

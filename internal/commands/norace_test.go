//go:build !race && linux

package commands

const raceEnabled = false

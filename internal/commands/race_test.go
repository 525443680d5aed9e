//go:build race && linux

package commands

// raceEnabled: the race detector makes the 1 GiB round trip take minutes,
// so under -race the big-output test uses less (.ci/run also runs it at
// full size without -race).
const raceEnabled = true

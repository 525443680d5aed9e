//go:build race

package procs

// The race detector's shadow memory grows with every allocation, garbage
// included, so memory bounds are looser under it.
const raceEnabled = true

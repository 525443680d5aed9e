// Package conformance plays an upstream platform: it knows the Local PC
// Executor protocol v1.1 as the upstream project publishes it (its
// docs/PROTOCOL.md and message models), not as hostlink implements it,
// and checks hostlink's frames against that vocabulary. Every way a frame
// differs is a Difference with a stable id; the "Differences from
// upstream" table in hostlink's docs/PROTOCOL.md lists the ids hostlink
// differs by deliberately, and a test fails on any other.
package conformance

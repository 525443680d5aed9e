package main

import (
	"sort"
	"time"
)

// summary is the median and 90th percentile of a set of samples.
type summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	Unit   string  `json:"unit"`
}

// summarize uses the nearest-rank method: p90 of 5 samples is the 5th.
func summarize(xs []float64, unit string) *summary {
	if len(xs) == 0 {
		return nil
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	rank := func(p float64) float64 {
		i := int(p*float64(len(s))+0.999999) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(s) {
			i = len(s) - 1
		}
		return s[i]
	}
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &summary{N: len(s), Median: med, P90: rank(0.9), Unit: unit}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cpuSplit accumulates, over a scenario's timed runs, where each run's
// time went: CPU in the server's process tree, CPU in the client's
// process, and the rest of the wall time, when neither was on a CPU (pipe
// and scheduler wake-ups, or waiting for a core on a loaded machine).
type cpuSplit struct {
	n                    int
	wall, server, client time.Duration
}

func (c *cpuSplit) add(wall, server, client time.Duration) {
	c.n++
	c.wall += wall
	c.server += server
	c.client += client
}

// cpuMeans is a cpuSplit's per-run means, in ms. For the TypeScript client
// the client's CPU includes the Node program's side of the relay (small
// unless a result's text is passed back). Other is negative when server
// and client ran in parallel.
type cpuMeans struct {
	Wall   float64 `json:"wall_ms"`
	Server float64 `json:"server_cpu_ms"`
	Client float64 `json:"client_cpu_ms"`
	Other  float64 `json:"other_ms"`
}

func (c *cpuSplit) mean() *cpuMeans {
	if c == nil || c.n == 0 {
		return nil
	}
	n := float64(c.n)
	m := &cpuMeans{Wall: ms(c.wall) / n, Server: ms(c.server) / n, Client: ms(c.client) / n}
	m.Other = m.Wall - m.Server - m.Client
	return m
}

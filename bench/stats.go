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

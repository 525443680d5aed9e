package commands

import "time"

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

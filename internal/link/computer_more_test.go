package link

import (
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestAppLaunchLimit(t *testing.T) {
	now := time.Unix(1000, 0)
	r := newRateLimits()
	r.now = func() time.Time { return now }
	for i := range MaxAppLaunchesPerMinute {
		if err := r.appLaunch(); err != nil {
			t.Fatalf("launch %d: %v", i+1, err)
		}
	}
	if err := r.appLaunch(); errcode.CodeOf(err) != errcode.Overloaded {
		t.Fatalf("launch %d in a minute: %v", MaxAppLaunchesPerMinute+1, err)
	}
	now = now.Add(time.Minute)
	if err := r.appLaunch(); err != nil {
		t.Fatalf("a minute later: %v", err)
	}
}

func TestWindowTable(t *testing.T) {
	var w windowTable
	w.add(1, []string{"win_a"})
	w.add(1, []string{"win_b"})
	if !w.has(1, "win_a") || !w.has(1, "win_b") || w.has(1, "win_c") {
		t.Error("ids of this connection")
	}
	if w.has(2, "win_a") {
		t.Error("an id outlived its connection")
	}
	w.add(2, []string{"win_c"})
	if w.has(2, "win_a") || !w.has(2, "win_c") || w.has(1, "win_c") {
		t.Error("a new connection kept the old ids")
	}
}

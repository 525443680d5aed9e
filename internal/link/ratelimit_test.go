package link

import (
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestRateLimits(t *testing.T) {
	now := time.Unix(1000, 0)
	r := newRateLimits()
	r.now = func() time.Time { return now }

	var dones []func()
	for range MaxConcurrentCommands {
		done, err := r.startCommand()
		if err != nil {
			t.Fatal(err)
		}
		dones = append(dones, done)
	}
	if _, err := r.startCommand(); errcode.CodeOf(err) != errcode.Overloaded {
		t.Fatalf("command %d while %d run: %v", MaxConcurrentCommands+1, MaxConcurrentCommands, err)
	}
	for _, d := range dones {
		d()
		d() // idempotent
	}
	// The per-minute budget counts starts, running or not.
	for i := MaxConcurrentCommands; i < MaxCommandsPerMinute; i++ {
		done, err := r.startCommand()
		if err != nil {
			t.Fatalf("command %d: %v", i+1, err)
		}
		done()
	}
	_, err := r.startCommand()
	if errcode.CodeOf(err) != errcode.Overloaded || errcode.As(err).Details["limit"] != "commands_per_minute" {
		t.Fatalf("command %d in a minute: %v", MaxCommandsPerMinute+1, err)
	}
	now = now.Add(time.Minute)
	if done, err := r.startCommand(); err != nil {
		t.Fatalf("a minute later: %v", err)
	} else {
		done()
	}

	for i := range MaxScreenshotsPerMinute {
		if err := r.screenshot(); err != nil {
			t.Fatalf("screenshot %d: %v", i+1, err)
		}
	}
	if err := r.screenshot(); errcode.CodeOf(err) != errcode.Overloaded {
		t.Fatalf("screenshot %d: %v", MaxScreenshotsPerMinute+1, err)
	}
	now = now.Add(30 * time.Second)
	if err := r.screenshot(); errcode.CodeOf(err) != errcode.Overloaded {
		t.Fatalf("half a minute later: %v", err)
	}
	now = now.Add(31 * time.Second)
	if err := r.screenshot(); err != nil {
		t.Fatalf("a minute later: %v", err)
	}
}

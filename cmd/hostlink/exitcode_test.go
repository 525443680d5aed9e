package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hostlink/hostlink/internal/daemon"
)

func TestExitCode(t *testing.T) {
	consent := fmt.Errorf("serve: %w", &daemon.ConsentError{Reason: "permission_pending"})
	for _, tc := range []struct {
		err  error
		want int
	}{{consent, 78}, {errors.New("other"), 1}, {errSilent, 1}} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.err, got, tc.want)
		}
	}
}

package main

import (
	"context"
	"os"

	"github.com/hostlink/hostlink/internal/doctor"
)

type doctorCmd struct {
	JSON     bool   `help:"Print JSON, for scripts."`
	Platform string `help:"Platform link URL to check (default: link.url, else the paired platform)."`
}

// Run prints the report; hostlink exits 1 when a check failed.
func (d *doctorCmd) Run(ctx context.Context, c *cli) error {
	r := doctor.Run(ctx, doctor.Options{ConfigPath: c.Config, Platform: d.Platform})
	if d.JSON {
		if err := printJSON(r); err != nil {
			return err
		}
	} else {
		doctor.Print(os.Stdout, r)
	}
	if !r.OK {
		return errSilent
	}
	return nil
}

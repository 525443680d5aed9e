package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/pairing"
	"github.com/hostlink/hostlink/internal/textsafe"
)

type consoleCmd struct {
	Print bool `help:"Print the login link instead of opening a browser."`
}

// Run asks the running daemon, over the control channel, for a one-time
// login link to its web console and opens it in the browser (or prints
// it). Under [policy] confirm_in_person the daemon opens it itself and
// hands the link to nobody, this command included.
func (c *consoleCmd) Run(ctx context.Context) error {
	res, err := daemonCall(ctx, apitype.MethodConsoleLogin, nil)
	if err != nil {
		return err
	}
	var l apitype.ConsoleLogin
	if err := json.Unmarshal(res, &l); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	until := l.ExpiresAt.Local().Format("15:04:05")
	if l.Opened {
		fmt.Println("the daemon opened the web console in your browser (confirm_in_person is on, so it hands the login link to no program); the link works once, until " + until)
		return nil
	}
	if c.Print {
		fmt.Println(textsafe.Line(l.URL))
		fmt.Fprintln(os.Stderr, "hostlink: the link logs one browser in to the web console, once, until "+until)
		return nil
	}
	if err := pairing.OpenBrowser(l.URL); err != nil {
		fmt.Fprintf(os.Stderr, "hostlink: no browser could be opened (%v); open this link, which works once, until %s:\n", err, until)
		fmt.Println(textsafe.Line(l.URL))
		return nil
	}
	fmt.Printf("opening the web console in your browser; if none appears, open this link (it works once, until %s):\n%s\n", until, textsafe.Line(l.URL))
	return nil
}

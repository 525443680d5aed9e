package main

import "github.com/hostlink/hostlink/internal/daemon"

// linkFlags connect serve out to a platform.
type linkFlags struct {
	Platform          string `help:"Connect out to this platform control endpoint (wss://…/ws/local-executor; ws:// only to loopback); default from config [link] url."`
	PlatformTokenFile string `help:"File holding the platform bearer token (else $HOSTLINK_PLATFORM_TOKEN)." type:"path"`
	PlatformSession   string `help:"Legacy binding: connect straight to this session's data endpoint, jailed to the default workdir."`
}

// linkOptions are the flags over the config's [link] section.
func (f linkFlags) linkOptions(d *daemon.Daemon) daemon.LinkOptions {
	o := daemon.LinkOptions{URL: d.Config.Link.URL, TokenFile: d.Config.Link.TokenFile, Session: f.PlatformSession,
		ComputerUse: d.ComputerUse}
	if f.Platform != "" {
		o.URL = f.Platform
	}
	if f.PlatformTokenFile != "" {
		o.TokenFile = f.PlatformTokenFile
	}
	return o
}

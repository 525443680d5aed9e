package main

import "github.com/hostlink/hostlink/internal/daemon"

// linkFlags connect serve out to a platform.
type linkFlags struct {
	Platform          string `help:"Connect out to this platform control endpoint (wss://…/ws/local-executor; ws:// only to loopback)."`
	PlatformTokenFile string `help:"File holding the platform bearer token (else $HOSTLINK_PLATFORM_TOKEN)." type:"path"`
	PlatformSession   string `help:"Legacy binding: connect straight to this session's data endpoint, jailed to the default workdir."`
}

func (f linkFlags) linkOptions() daemon.LinkOptions {
	return daemon.LinkOptions{URL: f.Platform, TokenFile: f.PlatformTokenFile, Session: f.PlatformSession}
}

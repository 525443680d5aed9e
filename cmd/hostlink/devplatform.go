package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/private"
)

type devPlatformCmd struct {
	Serve  devPlatformServeCmd  `cmd:"" default:"withargs" help:"Serve the reference platform on loopback (the default)."`
	Send   devPlatformSendCmd   `cmd:"" help:"Send one message to a connected executor and print the reply."`
	Attach devPlatformAttachCmd `cmd:"" help:"Browse the executor down to a folder, attach it to a session and activate it."`
}

type devPlatformServeCmd struct {
	Listen    string `help:"Loopback address to listen on." default:"127.0.0.1:7718"`
	TokenFile string `help:"Token file (created, private, if missing)." required:"" type:"path"`
	AddrFile  string `help:"Write the bound address here once listening (for scripts)." type:"path"`
	Version   string `name:"protocol-version" help:"Protocol version the platform speaks at most." default:"1.1"`
}

func (c *devPlatformServeCmd) Run(ctx context.Context) error {
	tok, err := devToken(c.TokenFile, true)
	if err != nil {
		return err
	}
	ln, err := devplatform.Listen(c.Listen)
	if err != nil {
		return err
	}
	srv := devplatform.New(tok, devplatform.Config{ProtocolVersion: c.Version})
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	addr := ln.Addr().String()
	fmt.Fprintf(os.Stderr, "hostlink dev-platform (a reference endpoint, not a production platform)\n")
	fmt.Fprintf(os.Stderr, "  control endpoint: ws://%s%s\n  data endpoints:   ws://%s%s/{session_id}\n  API:              http://%s/api/ (bearer token in %s)\n",
		addr, devplatform.ControlPath, addr, devplatform.ControlPath, addr, c.TokenFile)
	if c.AddrFile != "" {
		if err := os.WriteFile(c.AddrFile, []byte(addr+"\n"), 0o600); err != nil {
			return err
		}
	}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type devPlatformSendCmd struct {
	API       string  `help:"The dev-platform's address (host:port)." default:"127.0.0.1:7718"`
	TokenFile string  `help:"The dev-platform's token file." required:"" type:"path"`
	Peer      string  `arg:"" help:"'control' or a session id."`
	Type      string  `arg:"" help:"Message type, e.g. DIRECTORY_LIST_REQUEST."`
	Payload   string  `arg:"" optional:"" help:"Payload JSON (default {})."`
	Timeout   float64 `help:"Seconds to wait for the reply." default:"60"`
}

func (c *devPlatformSendCmd) Run() error {
	tok, err := devToken(c.TokenFile, false)
	if err != nil {
		return err
	}
	payload := json.RawMessage("{}")
	if c.Payload != "" {
		if !json.Valid([]byte(c.Payload)) {
			return errors.New("payload is not valid JSON")
		}
		payload = json.RawMessage(c.Payload)
	}
	return apiPost(c.API, tok, "/api/send", devplatform.SendRequest{Peer: c.Peer, Type: c.Type, Payload: payload, TimeoutSeconds: c.Timeout})
}

type devPlatformAttachCmd struct {
	API       string `help:"The dev-platform's address (host:port)." default:"127.0.0.1:7718"`
	TokenFile string `help:"The dev-platform's token file." required:"" type:"path"`
	Session   string `arg:"" help:"Session id to attach."`
	Path      string `arg:"" help:"Absolute path of a folder on the executor's machine."`
}

func (c *devPlatformAttachCmd) Run() error {
	tok, err := devToken(c.TokenFile, false)
	if err != nil {
		return err
	}
	return apiPost(c.API, tok, "/api/attach", devplatform.AttachRequest{SessionID: c.Session, Path: c.Path})
}

// apiPost posts body to the dev-platform's API and prints the reply.
func apiPost(api, tok, path string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest("POST", "http://"+api+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	os.Stdout.Write(out)
	if resp.StatusCode != 200 {
		return fmt.Errorf("dev-platform: HTTP %d", resp.StatusCode)
	}
	return nil
}

// devToken reads the token file, creating it when create is set.
func devToken(path string, create bool) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && create {
		tok := devplatform.NewToken()
		return tok, private.WriteFile(path, []byte(tok+"\n"))
	}
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", errors.New("token file is empty")
	}
	return tok, nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/paths"
)

type meshCmd struct {
	Join    meshJoinCmd    `cmd:"" help:"Enrol this machine with a hub: hostlink mesh join HUB-URL CODE (the code from hostlink hub enrol)."`
	Status  meshStatusCmd  `cmd:"" help:"Show this machine's enrolment: its key, the bus, the callers it trusts."`
	Trust   meshTrustCmd   `cmd:"" help:"Trust a caller key (a gateway, a tool): its signed requests may reach this machine, within [mesh] classes and [policy]."`
	Untrust meshUntrustCmd `cmd:"" help:"Stop trusting a caller key, at once."`
}

type meshJoinCmd struct {
	Hub  string `arg:"" help:"The hub's address, as hostlink hub enrol printed it (https://, or http:// on loopback)."`
	Code string `arg:"" help:"The one-time enrolment code."`
}

func (j *meshJoinCmd) Run(ctx context.Context) error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	if old, err := mesh.LoadEnrolment(dirs.State); err == nil {
		fmt.Fprintf(os.Stderr, "this machine was enrolled as %s; joining again replaces that enrolment\n", old.Key)
	}
	st, err := credentialStore()
	if err != nil {
		return err
	}
	enr, seed, err := mesh.Join(ctx, j.Hub, j.Code, "")
	if err != nil {
		return err
	}
	if err := st.Set(ctx, mesh.SeedName, seed); err != nil {
		return fmt.Errorf("keeping the machine's key: %w", err)
	}
	if err := enr.Save(dirs.State); err != nil {
		return err
	}
	fmt.Printf("Enrolled as %q, machine key %s; its seed is in the %s.\n", enr.Name, enr.Key, st.Describe())
	for _, c := range enr.Callers {
		fmt.Printf("Trusting caller %q %s (the hub's gateway; `hostlink mesh untrust %s` stops that).\n", c.Name, c.Key, c.Key)
	}
	fmt.Println("Set [mesh] enabled = true in the configuration and restart hostlink serve to serve the mesh;")
	fmt.Println("callers may use only the classes in [mesh] classes (by default reading files), under your [policy].")
	return nil
}

type meshStatusCmd struct{}

func (meshStatusCmd) Run() error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	enr, err := mesh.LoadEnrolment(dirs.State)
	if err != nil {
		return err
	}
	return printJSON(enr)
}

type meshTrustCmd struct {
	Name string `arg:"" help:"A name for the caller, as audit records show it."`
	Key  string `arg:"" help:"The caller's public key (U...)."`
}

func (c *meshTrustCmd) Run() error {
	if !mesh.ValidMachine(c.Key) {
		return fmt.Errorf("%q is not a caller's public key (an NKey user key, U...)", c.Key)
	}
	return changeCallers(func(list []mesh.Caller) []mesh.Caller {
		list = slices.DeleteFunc(list, func(x mesh.Caller) bool { return x.Key == c.Key })
		return append(list, mesh.Caller{Name: c.Name, Key: c.Key})
	})
}

type meshUntrustCmd struct {
	Key string `arg:"" help:"The caller's public key."`
}

func (c *meshUntrustCmd) Run() error {
	found := false
	err := changeCallers(func(list []mesh.Caller) []mesh.Caller {
		n := len(list)
		list = slices.DeleteFunc(list, func(x mesh.Caller) bool { return x.Key == c.Key })
		found = len(list) < n
		return list
	})
	if err == nil && !found {
		return errors.New("no trusted caller has that key")
	}
	return err
}

func changeCallers(f func([]mesh.Caller) []mesh.Caller) error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	enr, err := mesh.LoadEnrolment(dirs.State)
	if err != nil {
		return err
	}
	enr.Callers = f(enr.Callers)
	return enr.Save(dirs.State)
}

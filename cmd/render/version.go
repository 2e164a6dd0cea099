package main

import (
	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/version"
)

// runVersion prints the build's version, commit, date and Go release.
func runVersion(args []string, io stdio) error {
	fs := newFlags("render version", io)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("render version takes no arguments")
	}
	return version.Get().Write(io.out, "render", *asJSON)
}

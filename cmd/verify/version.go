package main

import (
	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/version"
)

// runVersion prints the build's version, commit, date and Go release.
func runVersion(args []string, io stdio) error {
	fs := help().FlagSet("version", io.out, io.err, io.onHelp)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("verify version takes no arguments")
	}
	return version.Get().Write(io.out, "verify", *asJSON)
}

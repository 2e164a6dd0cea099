//go:build ignore

// gen writes the JSON Schema files of this folder from the Go types.
package main

import (
	"fmt"
	"os"

	"github.com/fleetwright/fleetwright/internal/spec/schemagen"
)

func main() {
	root, err := schemagen.FindModuleRoot(".")
	if err == nil {
		var files schemagen.Files
		files, err = schemagen.Generate(root)
		for name, b := range files {
			if err == nil {
				err = os.WriteFile(name, b, 0o644)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "schema:", err)
		os.Exit(1)
	}
}

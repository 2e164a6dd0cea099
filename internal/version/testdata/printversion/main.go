// Command printversion prints version.Get as JSON, for the link-time test.
package main

import (
	"os"

	"github.com/fleetwright/fleetwright/internal/version"
)

func main() {
	if err := version.Get().Write(os.Stdout, "printversion", true); err != nil {
		os.Exit(1)
	}
}

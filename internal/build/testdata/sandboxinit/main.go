// Command sandboxinit is a RUN container's pid 1 for the tests, whose own
// executable is linked dynamically: package sandboxinit's init function
// does the work; main runs only when it is started otherwise.
package main

import (
	"fmt"
	"os"

	_ "github.com/fleetwright/fleetwright/internal/build/sandboxinit"
)

func main() {
	fmt.Fprintln(os.Stderr, "sandboxinit: the pid 1 of a RUN's container, started by the builder only")
	os.Exit(2)
}

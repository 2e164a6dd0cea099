package github_test

import (
	"fmt"

	"github.com/fleetwright/fleetwright/internal/github"
)

func ExampleMarker() {
	fmt.Println(github.Marker("render-diff"))
	// Output: <!-- fleetwright:render-diff -->
}

func ExampleParseRepo() {
	r, err := github.ParseRepo("acme/fleet")
	fmt.Println(r.Owner, r.Name, err)
	// Output: acme fleet <nil>
}

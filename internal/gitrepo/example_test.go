package gitrepo_test

import (
	"fmt"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
)

// The token is sent as the password of HTTP basic authentication and never
// printed.
func ExampleTokenAuth() {
	fmt.Println(gitrepo.TokenAuth("ghs_secret"))
	// Output: http-basic-auth - x-access-token:*******
}

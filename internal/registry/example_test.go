package registry_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fleetwright/fleetwright/internal/registry"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
)

func ExampleClient_Pin() {
	srv := registrytest.Start(registrytest.Options{})
	defer srv.Close()
	ref, _ := name.ParseReference(srv.Host() + "/team/app:v1")
	_ = remote.Write(ref, empty.Image)

	c := registry.New(registry.Options{})
	pinned, err := c.Pin(context.Background(), srv.Host()+"/team/app:v1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Replace(pinned, srv.Host(), "registry.example", 1))
	// Output: registry.example/team/app:v1@sha256:732112270d7e59418a8c080b134b24cabd67d250d0d0147a97ed95ba5c280aa4
}

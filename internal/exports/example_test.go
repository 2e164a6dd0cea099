package exports_test

import (
	"errors"
	"fmt"

	"github.com/fleetwright/fleetwright/internal/exports"
)

func ExampleForAddon() {
	// The postgres component of app my-api in project shop, as render
	// installs it.
	in := exports.AddonInput{
		Type:      "postgresql",
		Release:   "my-api-postgres",
		Namespace: "shop",
		Values: exports.WithFullnameOverride(map[string]any{
			"auth": map[string]any{"database": "myapp", "username": "myapp"},
		}, "my-api-postgres"),
	}
	exp, err := exports.ForAddon(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(exp["host"].Value, exp["port"].Value)
	fmt.Println(exp["password"].Kind, *exp["password"].Secret)
	fmt.Println(exp["connection_string"].Template)
	// Output:
	// my-api-postgres.shop.svc.cluster.local 5432
	// secret {my-api-postgres password}
	// postgresql://myapp:$(PASSWORD)@my-api-postgres.shop.svc.cluster.local:5432/myapp
}

func ExampleWire() {
	exp, err := exports.ForAddon(exports.AddonInput{
		Type: "redis", Release: "my-api-cache", Namespace: "shop",
		Values: exports.WithFullnameOverride(nil, "my-api-cache"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range exports.Wire("REDIS_URL", exp["connection_string"]) {
		if v.Secret != nil {
			fmt.Printf("%s from Secret %s key %s\n", v.Name, v.Secret.Name, v.Secret.Key)
			continue
		}
		fmt.Printf("%s=%s\n", v.Name, v.Value)
	}
	// Output:
	// FW_REDIS_URL_PASSWORD from Secret my-api-cache key redis-password
	// REDIS_URL=redis://:$(FW_REDIS_URL_PASSWORD)@my-api-cache-master.shop.svc.cluster.local:6379
}

func ExampleForWorkload() {
	exp := exports.ForWorkload("my-api-api", "shop", 8000)
	fmt.Println(exp["url"].Value)
	// Output: http://my-api-api.shop.svc.cluster.local:8000
}

func ExampleLookup() {
	_, err := exports.Lookup(exports.AddonInput{
		Type: "redis", Release: "c", Namespace: "shop",
		Values: map[string]any{"auth": map[string]any{"enabled": false}},
	}, "password")
	fmt.Println(errors.Is(err, exports.ErrUnavailable))
	fmt.Println(err)
	// Output:
	// true
	// export unavailable: redis export "password": auth.enabled is false: Redis runs without a password
}

func ExampleChecksum() {
	consumed := map[string]exports.Export{
		"api/url": exports.ForWorkload("my-api-api", "shop", 8000)["url"],
	}
	fmt.Println(len(exports.Checksum(consumed)))
	// Output: 64
}

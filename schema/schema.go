// Package schema holds the committed JSON Schemas of app.yaml and
// platform.yaml. They are generated from the Go types of internal/spec:
// run `go generate ./...` after changing those types.
package schema

import _ "embed"

//go:generate go run gen.go

// App is app.schema.json.
//
//go:embed app.schema.json
var App []byte

// Platform is platform.schema.json.
//
//go:embed platform.schema.json
var Platform []byte

// AppID and PlatformID are the schemas' $id.
const (
	AppID      = "https://fleetwright.dev/schema/app.schema.json"
	PlatformID = "https://fleetwright.dev/schema/platform.schema.json"
)

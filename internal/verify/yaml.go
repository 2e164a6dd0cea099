package verify

import "github.com/fleetwright/fleetwright/internal/yamlx"

// node is a parsed YAML value with its position, the JSON-compatible view
// of a Kubernetes object that the checks walk.
type node = yamlx.Node

// doc is one YAML document of a file.
type doc = yamlx.Doc

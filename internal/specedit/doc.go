// Package specedit edits YAML and JSON spec files the way a careful person
// would by hand: it changes only the bytes of the value it sets, inserts a
// new key as one new line (or one new member in a flow map or a JSON
// object) next to its siblings with their indentation, and removes a key
// with its own line only. Comments, key order, quoting, blank lines and
// every other byte of the file stay as they were.
//
// It reads the file with yaml.v3 (go.yaml.in/yaml/v3), which parses JSON
// too, and uses the nodes' positions to find the text to change; after
// every edit the file is parsed again, so a Doc always reflects its bytes.
//
// Paths name map keys (string), list indexes (int) and list items by their
// name field (ByName), as in components[api].workload_spec.replicas; see
// ParsePath.
package specedit

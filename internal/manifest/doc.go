// Package manifest turns Kubernetes objects into the bytes of fleet files:
// deterministic YAML (sorted keys, no nulls, no status) written directly,
// without the slow JSON-to-YAML round trip of sigs.k8s.io/yaml, and the
// DO-NOT-EDIT header every generated file starts with.
package manifest

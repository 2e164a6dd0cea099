package schema_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/spec/schemagen"
	"github.com/fleetwright/fleetwright/schema"
)

// TestCommittedSchemaIsFresh fails when the Go types changed without
// `go generate ./...`.
func TestCommittedSchemaIsFresh(t *testing.T) {
	t.Parallel()
	root, err := schemagen.FindModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	files, err := schemagen.Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for name, committed := range map[string][]byte{"app.schema.json": schema.App, "platform.schema.json": schema.Platform} {
		if d := cmp.Diff(string(committed), string(files[name])); d != "" {
			t.Errorf("schema/%s is stale; run `go generate ./...` (-committed +generated):\n%s", name, d)
		}
	}
}

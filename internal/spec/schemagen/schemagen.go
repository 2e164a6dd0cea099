// Package schemagen generates the JSON Schema files in schema/ from the Go
// types of package spec, with the types' doc comments as descriptions.
package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/invopop/jsonschema"

	"github.com/fleetwright/fleetwright/internal/spec"
)

// Module is the import path of the module.
const Module = "github.com/fleetwright/fleetwright"

// BaseID is the base of the schemas' $id.
const BaseID = "https://fleetwright.dev/schema/"

// Files maps each generated file name to its content.
type Files map[string][]byte

// Generate builds app.schema.json and platform.schema.json. moduleRoot is the
// folder holding go.mod; comments are read from its internal/spec folder.
func Generate(moduleRoot string) (Files, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	specDir, err := filepath.Rel(cwd, filepath.Join(moduleRoot, "internal", "spec"))
	if err != nil {
		return nil, err
	}
	// AddGoComments joins the base with the walked path; compensate for a walk
	// that does not start at the module root.
	relCwd, err := filepath.Rel(moduleRoot, cwd)
	if err != nil {
		return nil, err
	}
	base := path.Join(Module, filepath.ToSlash(relCwd))

	out := Files{}
	for _, s := range []struct {
		file, title string
		v           any
	}{
		{"app.schema.json", "fleetwright app", &spec.App{}},
		{"platform.schema.json", "fleetwright platform", &spec.Platform{}},
	} {
		r := &jsonschema.Reflector{
			RequiredFromJSONSchemaTags: true,
			ExpandedStruct:             true,
		}
		if err := r.AddGoComments(base, filepath.ToSlash(specDir)); err != nil {
			return nil, fmt.Errorf("reading comments: %w", err)
		}
		sch := r.Reflect(s.v)
		sch.ID = jsonschema.ID(BaseID + s.file)
		sch.Title = s.title
		b, err := json.MarshalIndent(sch, "", "  ")
		if err != nil {
			return nil, err
		}
		out[s.file] = append(b, '\n')
	}
	return out, nil
}

// FindModuleRoot walks up from dir to the folder holding go.mod.
func FindModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(b, []byte("module "+Module+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working folder", Module)
		}
		dir = parent
	}
}

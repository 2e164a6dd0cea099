package diag_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fleetwright/fleetwright/internal/diag"
)

const testSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["name", "port"],
  "additionalProperties": false,
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]+$"},
    "port": {"type": "integer", "minimum": 1, "maximum": 65535},
    "mode": {"enum": ["dir", "push"]},
    "tags": {"type": "array", "minItems": 2},
    "size": {"oneOf": [{"type": "string", "pattern": "^[0-9]+Mi$"}, {"type": "number"}]},
    "short": {"type": "string", "minLength": 3}
  }
}`

func compile(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("test.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("test.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSchema(t *testing.T) {
	t.Parallel()
	sch := compile(t)
	type failure struct {
		Path    string
		Name    string
		Message string
	}
	tests := []struct {
		name string
		doc  string
		want []failure
	}{
		{"valid", `{"name": "api", "port": 80}`, nil},
		{"missing and unknown", `{"nme": "api", "prt": 1}`, []failure{
			{"", "nme", `unknown field "nme"`}, {"", "prt", `unknown field "prt"`},
			{"", "name", `missing required field "name"`}, {"", "port", `missing required field "port"`},
		}},
		{"type", `{"name": 3, "port": "80"}`, []failure{{"name", "", "must be a string, not a number"}, {"port", "", "must be a whole number, not a string"}}},
		{"bounds", `{"name": "", "port": 70000, "tags": ["a"], "short": "ab"}`, []failure{
			{"name", "", "must not be empty"}, {"name", "", `"" does not match ^[a-z]+$`},
			{"port", "", "must be ≤ 65535; got 70000"}, {"short", "", "must be at least 3 characters long"},
			{"tags", "", "must have at least 2 items"},
		}},
		{"too long", `{"name": "abcdefg", "port": 0}`, []failure{{"name", "", "must be at most 5 characters long; got 7"}, {"port", "", "must be ≥ 1; got 0"}}},
		{"enum", `{"name": "a", "port": 1, "mode": null}`, []failure{{"mode", "", "must be one of dir, push; got nothing"}}},
		{"oneOf is one failure", `{"name": "a", "port": 1, "size": "12Gi"}`, []failure{{"size", "", "'oneOf' failed, none matched"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var v any
			if err := json.Unmarshal([]byte(tt.doc), &v); err != nil {
				t.Fatal(err)
			}
			err := sch.Validate(v)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			var got []failure
			for _, e := range diag.Schema(err) {
				if e.Kind == nil {
					t.Errorf("%q has no kind", e.Message)
				}
				got = append(got, failure{strings.Join(e.Path, "/"), e.Name, e.Message})
			}
			sortf := cmpopts.SortSlices(func(a, b failure) bool { return a.Path+a.Name+a.Message < b.Path+b.Name+b.Message })
			if d := cmp.Diff(tt.want, got, sortf); d != "" {
				t.Errorf("failures (-want +got):\n%s", d)
			}
		})
	}
}

// An error that is not a validation error is one failure, in its own words.
func TestSchemaOtherError(t *testing.T) {
	t.Parallel()
	got := diag.Schema(errors.New("cannot read the instance"))
	if len(got) != 1 || got[0].Kind != nil || got[0].Message != "cannot read the instance" {
		t.Errorf("Schema = %+v", got)
	}
}

func TestDisplay(t *testing.T) {
	t.Parallel()
	for v, want := range map[any]string{"a": `"a"`, nil: "nothing", 3.5: "3.5", true: "true", json.Number("7"): "7"} {
		if got := diag.Display(v); got != want {
			t.Errorf("Display(%#v) = %s, want %s", v, got, want)
		}
	}
}

package template_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/template"
)

const webDB = `name: web-db
version: 1.2.0
description: A web service and its database.
parameters:
  - name: image
    type: string
    required: true
    description: the web image
  - name: replicas
    type: integer
    default: 2
    minimum: 1
    maximum: 20
  - name: public
    type: boolean
    default: true
  - name: cpu
    type: number
    default: 0.5
  - name: tier
    type: string
    default: small
    enum: [small, large]
components:
  - name: db
    type: addon
    addon_spec:
      type: postgresql
      chart: {repo: https://charts.bitnami.com/bitnami, name: postgresql, version: 13.4.4}
  - name: web
    type: workload
    workload_spec:
      image: ${{ params.image }}
      replicas: "${{params.replicas}}"
      resources: {requests: {cpu: "${{ params.cpu }}"}}
      ingress: {enabled: "${{ params.public }}"}
      env:
        - {name: TIER, value: "tier-${{ params.tier }}-${{ params.replicas }}"}
        - {name: LITERAL, value: "$${{ not a placeholder }}"}
`

func TestExpandTyped(t *testing.T) {
	t.Parallel()
	tp, err := template.Parse("templates/web-db/template.yaml", []byte(webDB))
	if err != nil {
		t.Fatal(err)
	}
	if errs := tp.Check(map[string]any{"image": "myorg/web:1", "replicas": json.Number("3")}); len(errs) > 0 {
		t.Fatalf("Check: %v", errs)
	}
	n, origins := tp.Expand(map[string]any{"image": "myorg/web:1", "replicas": json.Number("3")})
	var got any
	if err := n.Decode(&got); err != nil {
		t.Fatal(err)
	}
	web := got.([]any)[1].(map[string]any)["workload_spec"].(map[string]any)
	want := map[string]any{
		"image":     "myorg/web:1",
		"replicas":  3,
		"resources": map[string]any{"requests": map[string]any{"cpu": 0.5}},
		"ingress":   map[string]any{"enabled": true},
		"env": []any{
			map[string]any{"name": "TIER", "value": "tier-small-3"},
			map[string]any{"name": "LITERAL", "value": "${{ not a placeholder }}"},
		},
	}
	if d := cmp.Diff(want, web); d != "" {
		t.Errorf("expanded web (-want +got):\n%s", d)
	}
	// The replicas node keeps the template's line and names its parameter.
	var found bool
	for node, params := range origins {
		if node.Value == "3" && node.Tag == "!!int" {
			found = true
			if node.Line != 34 || cmp.Diff([]string{"replicas"}, params) != "" {
				t.Errorf("replicas node at line %d from %v, want line 34 from [replicas]", node.Line, params)
			}
		}
	}
	if !found {
		t.Error("no origin recorded for replicas")
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tp, err := template.Parse("t.yaml", []byte(webDB))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		given map[string]any
		want  []string
	}{
		{"missing required", map[string]any{}, []string{`image: missing required parameter "image" (the web image)`}},
		{"unknown with suggestion", map[string]any{"image": "x", "replica": json.Number("2")}, []string{`replica: template web-db has no parameter "replica"; did you mean "replicas"?`}},
		{"wrong type", map[string]any{"image": "x", "replicas": "two"}, []string{"replicas: must be a whole number, not a string"}},
		{"not integer", map[string]any{"image": "x", "replicas": json.Number("2.5")}, []string{"replicas: must be a whole number, not a number"}},
		{"bounds", map[string]any{"image": "x", "replicas": json.Number("50")}, []string{"replicas: must be ≤ 20; got 50"}},
		{"enum", map[string]any{"image": "x", "tier": "huge"}, []string{`tier: must be one of "small", "large"; got "huge"`}},
		{"ok", map[string]any{"image": "x", "public": false}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, e := range tp.Check(tt.given) {
				got = append(got, e.Param+": "+e.Message)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseProblems(t *testing.T) {
	t.Parallel()
	head := "name: t\nversion: 1.0.0\n"
	comp := "components:\n  - name: web\n    type: workload\n    workload_spec:\n      image: %s\n"
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"unknown field", head + "colour: red\n" + strings.Replace(comp, "%s", "x", 1), "t.yaml:3:1: colour: unknown field \"colour\"; a template has name, version, description, parameters and components"},
		{"missing version", "name: t\n" + strings.Replace(comp, "%s", "x", 1), `t.yaml:1:1: missing required field "version"`},
		{"unknown placeholder", head + "parameters:\n  - {name: image, type: string, required: true}\n" + strings.Replace(comp, "%s", "${{ params.imag }}", 1),
			`t.yaml:9:14: components[0].workload_spec.image: unknown parameter "imag"; the template declares image`},
		{"malformed placeholder", head + strings.Replace(comp, "%s", "${{ image }}", 1), `t.yaml:7:14: components[0].workload_spec.image: "${{ image }}" is not a placeholder: write ${{ params.NAME }}, or $${{ for a literal ${{`},
		{"placeholder in key", head + "components:\n  - name: web\n    \"${{ params.x }}\": 1\n", "t.yaml:5:5: components[0]: placeholders go in values, not in keys"},
		{"no default", head + "parameters:\n  - name: image\n    type: string\n" + strings.Replace(comp, "%s", "x", 1), `t.yaml:4:5: parameters[0]: parameter "image" needs a default, or required: true`},
		{"required with default", head + "parameters:\n  - {name: image, type: string, required: true, default: x}\n" + strings.Replace(comp, "%s", "x", 1), "t.yaml:4:58: parameters[0].default: a required parameter takes no default; drop one of them"},
		{"default of wrong type", head + "parameters:\n  - {name: n, type: integer, default: many}\n" + strings.Replace(comp, "%s", "x", 1), "t.yaml:4:39: parameters[0].default: default must be a whole number, not a string"},
		{"bad type", head + "parameters:\n  - {name: n, type: float, default: 1}\n" + strings.Replace(comp, "%s", "x", 1), `t.yaml:4:5: parameters[0].type: unknown type "float"; use string, integer, boolean or number`},
		{"anchor", head + "components:\n  - &c {name: web}\n", "t.yaml:4:5: components[0]: anchors and aliases are not supported in templates; write the value out"},
		{"bad name", "name: Web\nversion: 1\n" + strings.Replace(comp, "%s", "x", 1), `t.yaml:1:7: name: "Web" is not a valid template name (lowercase letters, digits and '-', starting with a letter)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := template.Parse("t.yaml", []byte(tt.src))
			if err == nil {
				t.Fatal("no problem reported")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("problems:\n%v\nwant one: %s", err, tt.want)
			}
		})
	}
}

func TestSchema(t *testing.T) {
	t.Parallel()
	tp, err := template.Parse("t.yaml", []byte(webDB))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tp.Schema()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Required   []string                  `json:"required"`
		Additional bool                      `json:"additionalProperties"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if cmp.Diff([]string{"image"}, s.Required) != "" || s.Additional || s.Properties["replicas"]["type"] != "integer" || s.Properties["cpu"]["type"] != "number" {
		t.Errorf("schema:\n%s", raw)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(webDB))
	f.Add([]byte("name: t\nversion: 1\ncomponents:\n  - {a: \"${{ params.x }}\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tp, err := template.Parse("f.yaml", data)
		if err != nil {
			if _, ok := err.(template.Problems); !ok {
				t.Fatalf("error is a %T, not Problems", err)
			}
			return
		}
		// A template that parses expands with its defaults when it has no
		// required parameter.
		given := map[string]any{}
		for _, p := range tp.Params {
			if p.Required {
				return
			}
		}
		if errs := tp.Check(given); len(errs) > 0 {
			t.Fatalf("defaults do not pass the schema: %v", errs)
		}
		n, _ := tp.Expand(given)
		var v any
		if err := n.Decode(&v); err != nil {
			t.Fatalf("expanded components do not decode: %v", err)
		}
	})
}

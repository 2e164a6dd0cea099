package template_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/specedit"
	"github.com/fleetwright/fleetwright/internal/template"
)

const capturedYAML = `# yaml-language-server: $schema=../../../schema/app.schema.json
# The blog of the shop.
name: blog
timeout: 15m
components:
  # the database comes first
  - name: db
    type: addon
    addon_spec:
      type: postgresql
      chart: {repo: https://charts.bitnami.com/bitnami, name: postgresql, version: 13.4.4}
      values: {auth: {database: blog, username: blog}}
  - name: web
    type: workload
    depends_on: [db]
    workload_spec:
      image: myorg/blog:1.4.0   # bumped by CI
      replicas: 2
      port: 8080
      env:
        - {name: DATABASE_URL, export_ref: {component: db, export_key: connection_string}}
      ingress: {enabled: true, host: blog.example.com}
`

const capturedJSON = `{
  "name": "blog",
  "components": [
    {
      "name": "web",
      "type": "workload",
      "workload_spec": {
        "image": "myorg/blog:1.4.0",
        "replicas": 2,
        "port": 8080,
        "ingress": {"enabled": true, "host": "blog.example.com"}
      }
    }
  ]
}
`

func TestCapture(t *testing.T) {
	t.Parallel()
	params := func(kv ...string) []template.CaptureParam {
		var out []template.CaptureParam
		for i := 0; i+1 < len(kv); i += 2 {
			p, err := specedit.ParsePath(kv[i+1])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, template.CaptureParam{Name: kv[i], Path: p})
		}
		return out
	}
	tests := []struct {
		name, file, src, golden string
		params                  []template.CaptureParam
		renders                 string // an app using the template, to render like src
	}{
		{
			name: "yaml", file: "apps/shop/blog/app.yaml", src: capturedYAML, golden: "capture/template.yaml",
			params: params("image", "components[web].workload_spec.image", "replicas", "components[web].workload_spec.replicas",
				"host", "components[web].workload_spec.ingress.host", "database", "components[db].addon_spec.values.auth.database",
				"database", "components[db].addon_spec.values.auth.username"),
			renders: "name: blog\ntimeout: 15m\ntemplate: {name: blog-stack}\n",
		},
		{
			name: "json", file: "apps/shop/blog/app.json", src: capturedJSON, golden: "capture/template.json",
			params:  params("image", "$.components[0].workload_spec.image", "replicas", "components[web].workload_spec.replicas"),
			renders: `{"name": "blog", "template": {"name": "blog-stack", "parameters": {"replicas": 2}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := specedit.Parse(tt.file, []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			name, out, err := template.Capture(doc, template.CaptureOptions{Name: "blog-stack", Source: tt.file, Params: tt.params})
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Ext(name) != filepath.Ext(tt.file) {
				t.Errorf("template file %s for %s", name, tt.file)
			}
			golden.File(t, filepath.Join("testdata", tt.golden), out)
			// The app's file is not touched.
			if string(doc.Bytes()) != tt.src {
				t.Error("Capture changed the app's document")
			}
			// An app of the template renders the same fleet as the original.
			original := renderFiles(t, map[string]string{tt.file: tt.src})
			templated := renderFiles(t, map[string]string{
				"templates/blog-stack/" + name: string(out),
				tt.file:                        tt.renders,
			})
			if d := cmp.Diff(toStrings(original), toStrings(templated)); d != "" {
				t.Errorf("fleet (-original +from the captured template):\n%s", d)
			}
		})
	}
}

func TestCaptureErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, want string
	}{
		{"outside components", "timeout", "not inside components"},
		{"not a value", "components[web].workload_spec", "not a single value"},
		{"unknown component", "components[nope].workload_spec.image", `no item named "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := specedit.Parse("app.yaml", []byte(capturedYAML))
			if err != nil {
				t.Fatal(err)
			}
			p, err := specedit.ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = template.Capture(doc, template.CaptureOptions{Name: "x", Params: []template.CaptureParam{{Name: "p", Path: p}}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

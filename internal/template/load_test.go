package template_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

const platform = "apps_domain: apps.example.com\nbuild: {pin: false}\n"

const stackTemplate = `# A web service with its database.
name: web-db
version: 1.0.0
parameters:
  - name: image
    type: string
    required: true
  - name: replicas
    type: integer
    default: 2
  - name: host
    type: string
    required: true
  - name: database
    type: string
    default: app
components:
  - name: db
    type: addon
    addon_spec:
      type: postgresql
      chart: {repo: https://charts.bitnami.com/bitnami, name: postgresql, version: 13.4.4}
      values: {auth: {database: "${{ params.database }}", username: "${{ params.database }}"}}
  - name: web
    type: workload
    depends_on: [db]
    workload_spec:
      image: ${{ params.image }}
      replicas: ${{ params.replicas }}
      port: 8080
      env:
        - {name: DATABASE_URL, export_ref: {component: db, export_key: connection_string}}
        - {name: APP_NAME, value: "web-${{ params.database }}"}
      ingress: {enabled: true, host: "${{ params.host }}"}
`

func handWritten(name, image string, replicas int, host, database string) string {
	return strings.NewReplacer("@NAME@", name, "@IMAGE@", image, "@REPLICAS@", itoa(replicas), "@HOST@", host, "@DATABASE@", database).Replace(`name: @NAME@
components:
  - name: db
    type: addon
    addon_spec:
      type: postgresql
      chart: {repo: https://charts.bitnami.com/bitnami, name: postgresql, version: 13.4.4}
      values: {auth: {database: @DATABASE@, username: @DATABASE@}}
  - name: web
    type: workload
    depends_on: [db]
    workload_spec:
      image: @IMAGE@
      replicas: @REPLICAS@
      port: 8080
      env:
        - {name: DATABASE_URL, export_ref: {component: db, export_key: connection_string}}
        - {name: APP_NAME, value: web-@DATABASE@}
      ingress: {enabled: true, host: @HOST@}
`)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func loadFiles(t *testing.T, files map[string]string) (*load.Repo, load.Problems) {
	t.Helper()
	l := spectest.Loader(t)
	m := map[string][]byte{"platform.yaml": []byte(platform)}
	for k, v := range files {
		m[k] = []byte(v)
	}
	return l.LoadFiles(m)
}

func renderFiles(t *testing.T, files map[string]string) map[string][]byte {
	t.Helper()
	repo, ps := loadFiles(t, files)
	if ps.HasErrors() {
		t.Fatalf("invalid specs:\n%v", ps)
	}
	f, err := generate.Render(repo, generate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f.Map()
}

// TestTwoInstancesRenderLikeHandWritten renders two apps of one template
// and the same two apps written out, and compares every fleet file.
func TestTwoInstancesRenderLikeHandWritten(t *testing.T) {
	t.Parallel()
	templated := renderFiles(t, map[string]string{
		"templates/web-db/template.yaml": stackTemplate,
		"apps/shop/blog/app.yaml": `# yaml-language-server: $schema=../../../schema/app.schema.json
name: blog
template:
  name: web-db
  version: 1.0.0
  parameters:
    image: myorg/blog:1.4.0
    host: blog.example.com
`,
		"apps/shop/wiki/app.json": `{"name": "wiki", "template": {"name": "web-db", "parameters": {"image": "myorg/wiki:2.0", "host": "wiki.example.com", "replicas": 3, "database": "wiki"}}}`,
	})
	byHand := renderFiles(t, map[string]string{
		"apps/shop/blog/app.yaml": handWritten("blog", "myorg/blog:1.4.0", 2, "blog.example.com", "app"),
		"apps/shop/wiki/app.yaml": handWritten("wiki", "myorg/wiki:2.0", 3, "wiki.example.com", "wiki"),
	})
	if len(templated) == 0 {
		t.Fatal("nothing rendered")
	}
	if d := cmp.Diff(toStrings(byHand), toStrings(templated)); d != "" {
		t.Errorf("fleet (-by hand +from the template):\n%s", d)
	}
}

func toStrings(m map[string][]byte) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// TestProblemPositions checks where problems of templated apps point: at
// the template's line for what the template wrote, at the app's parameter
// for what the app gave.
func TestProblemPositions(t *testing.T) {
	t.Parallel()
	brokenTemplate := strings.Replace(stackTemplate, "port: 8080", "port: 70000", 1)
	tests := []struct {
		name     string
		template string
		app      string
		want     []string
	}{
		{
			name:     "problem in the template's components",
			template: brokenTemplate,
			app:      "name: blog\ntemplate:\n  name: web-db\n  parameters: {image: myorg/blog:1, host: blog.example.com}\n",
			want:     []string{"templates/web-db/template.yaml:30:13: components[1].workload_spec.port: must be ≤ 65535; got 70000"},
		},
		{
			name:     "bad value from the app's parameter",
			template: stackTemplate,
			app:      "name: blog\ntemplate:\n  name: web-db\n  parameters:\n    image: myorg/blog:1\n    host: not_a_host\n",
			want:     []string{`apps/shop/blog/app.yaml:6:11: components[1].workload_spec.ingress.host: "not_a_host" is not a valid host name`},
		},
		{
			name:     "parameter of the wrong type",
			template: stackTemplate,
			app:      "name: blog\ntemplate:\n  name: web-db\n  parameters:\n    image: myorg/blog:1\n    host: blog.example.com\n    replicas: many\n",
			want:     []string{"apps/shop/blog/app.yaml:7:15: template.parameters.replicas: must be a whole number, not a string"},
		},
		{
			name:     "unknown parameter",
			template: stackTemplate,
			app:      "name: blog\ntemplate:\n  name: web-db\n  parameters:\n    image: myorg/blog:1\n    host: blog.example.com\n    replica: 3\n",
			want:     []string{`apps/shop/blog/app.yaml:7:5: template.parameters.replica: template web-db has no parameter "replica"; did you mean "replicas"?`},
		},
		{
			name:     "missing required parameter",
			template: stackTemplate,
			app:      "name: blog\ntemplate:\n  name: web-db\n  parameters:\n    image: myorg/blog:1\n",
			want:     []string{`apps/shop/blog/app.yaml:4:3: template.parameters: missing required parameter "host"`},
		},
		{
			name:     "unknown template",
			template: stackTemplate,
			app:      "name: blog\ntemplate: {name: web-bd}\n",
			want:     []string{`apps/shop/blog/app.yaml:2:18: template.name: no template "web-bd": templates/web-bd/template.yaml does not exist; did you mean "web-db"?`},
		},
		{
			name:     "version mismatch",
			template: stackTemplate,
			app:      "name: blog\ntemplate: {name: web-db, version: 2.0.0, parameters: {image: a, host: b.example.com}}\n",
			want:     []string{"apps/shop/blog/app.yaml:2:35: template.version: template web-db is at version 1.0.0, not 2.0.0; update the version (and the parameters if they changed)"},
		},
		{
			name:     "template and components",
			template: stackTemplate,
			app:      "name: blog\ntemplate: {name: web-db}\ncomponents: []\n",
			want:     []string{"apps/shop/blog/app.yaml:3:1: components: an app that uses a template takes its components from it; remove components, or template"},
		},
		{
			name:     "invalid template file",
			template: strings.Replace(stackTemplate, "${{ params.image }}", "${{ params.imgae }}", 1),
			app:      "name: blog\ntemplate: {name: web-db, parameters: {image: a, host: b.example.com}}\n",
			want: []string{
				`apps/shop/blog/app.yaml:2:18: template.name: template "web-db" is invalid; see the problems in templates/web-db/template.yaml`,
				`templates/web-db/template.yaml:28:14: components[1].workload_spec.image: unknown parameter "imgae"; the template declares image, replicas, host, database`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ps := loadFiles(t, map[string]string{
				"templates/web-db/template.yaml": tt.template,
				"apps/shop/blog/app.yaml":        tt.app,
			})
			var got []string
			for _, p := range ps {
				if p.Severity != diag.Warning { // the default policy's warnings are not this test's
					got = append(got, p.Error())
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
		})
	}
}

// FuzzLoadTemplated loads an app of a template, both from the fuzzer: the
// loader must not panic, and every problem must point into one of the
// files at a line it has.
func FuzzLoadTemplated(f *testing.F) {
	f.Add([]byte(stackTemplate), []byte("name: blog\ntemplate:\n  name: web-db\n  parameters: {image: a, host: b.example.com}\n"))
	f.Add([]byte(stackTemplate), []byte("name: blog\ntemplate: {name: web-db, parameters: {image: a, host: 'x y', replicas: -1}}\n"))
	f.Add([]byte("name: web-db\nversion: 1\ncomponents:\n  - {name: w, type: workload, workload_spec: {image: \"${{ params.i }}\"}}\nparameters: [{name: i, type: string, default: x}]\n"), []byte("name: a\ntemplate: {name: web-db}\n"))
	l := spectest.Loader(f)
	f.Fuzz(func(t *testing.T, tpl, app []byte) {
		files := map[string][]byte{"templates/web-db/template.yaml": tpl, "apps/shop/blog/app.yaml": app}
		_, ps := l.LoadFiles(files)
		for _, p := range ps {
			data, ok := files[p.File]
			if !ok {
				t.Fatalf("problem in an unknown file: %v", p)
			}
			// YAML breaks lines at \n, \r and \r\n.
			s := string(data)
			lines := strings.Count(s, "\n") + strings.Count(s, "\r") - strings.Count(s, "\r\n") + 1
			if p.Line < 1 || p.Line > lines {
				t.Fatalf("problem at line %d of a %d-line file: %v", p.Line, lines, p)
			}
		}
	})
}

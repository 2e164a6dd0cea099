package template_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

// TestExampleTemplates instantiates every template under examples/ and
// renders it.
func TestExampleTemplates(t *testing.T) {
	t.Parallel()
	apps := map[string]string{
		"web-with-db": "name: blog\ntemplate:\n  name: web-with-db\n  version: 1.0.0\n  parameters: {image: myorg/blog:1.4.0, host: blog.example.com, environment: staging}\n",
		"worker":      "name: mailer\ntemplate: {name: worker, parameters: {image: myorg/mailer:2.0.0, concurrency: 8, max_replicas: 3}}\n",
	}
	wants := map[string]string{
		"web-with-db": "value: staging",
		"worker":      "--concurrency=8",
	}
	entries, err := os.ReadDir("../../examples/templates")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"web-with-db", "worker"}) {
		t.Fatalf("example templates %v: give each one an app in this test", names)
	}
	l := spectest.Loader(t)
	platform, err := os.ReadFile("../../examples/platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tpl, err := os.ReadFile(filepath.Join("../../examples/templates", name, "template.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			repo, ps := l.LoadFiles(map[string][]byte{
				"platform.yaml":                        platform,
				"templates/" + name + "/template.yaml": tpl,
				"apps/demo/" + name + "-app/app.yaml":  []byte(apps[name]),
			})
			if ps.HasErrors() {
				t.Fatalf("problems:\n%v", ps)
			}
			for _, p := range ps {
				t.Logf("%s", p.Error()) // the default policy's warnings
			}
			f, err := generate.Render(repo, generate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			all := ""
			for _, file := range f.Files {
				all += string(file.Data)
			}
			if want := wants[name]; !strings.Contains(all, want) {
				t.Errorf("the fleet of %s does not hold %q", name, want)
			}
		})
	}
}

package generate_test

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// reuseBase is a repository whose apps depend on each other in every way
// render knows: in-app exports, a cross-app export (web takes api's url),
// a template, and an app (solo) in another project that depends on nothing.
func reuseBase() map[string][]byte {
	return map[string][]byte{
		"platform.yaml": []byte("apps_domain: a.test\nclusters: [{name: c1}]\n"),
		"apps/shop/api/app.yaml": []byte(`name: api
components:
  - name: db
    type: addon
    addon_spec:
      type: postgresql
      chart: {repo: https://charts.example.test, name: postgresql, version: 13.4.4}
  - name: api
    type: workload
    workload_spec:
      image: reg.test/api:1
      port: 8080
      env:
        - {name: DATABASE_URL, export_ref: {component: db, export_key: connection_string}}
`),
		"apps/shop/web/app.yaml": []byte(`name: web
components:
  - name: web
    type: workload
    workload_spec:
      image: reg.test/web:1
      port: 80
      env:
        - {name: API_URL, export_ref: {app: api, component: api, export_key: url}}
`),
		"apps/shop/jobs/app.yaml": []byte(`name: jobs
template: {name: worker, parameters: {image: reg.test/jobs:1}}
`),
		"templates/worker/template.yaml": []byte(`name: worker
version: 1.0.0
parameters:
  - {name: image, type: string, required: true}
components:
  - name: worker
    type: workload
    workload_spec: {image: "${{ params.image }}", args: [--fast]}
`),
		"apps/other/solo/app.yaml": []byte(`name: solo
components:
  - name: web
    type: workload
    workload_spec: {image: reg.test/solo:1, port: 80}
`),
	}
}

type appRender struct {
	digests map[string]generate.Digest
	files   map[string]map[string][]byte // app → path → content
}

// renderDigests renders every app, asking Reuse for each (and answering
// no), and returns the digests it was asked with and the files.
func renderDigests(t *testing.T, files map[string][]byte, opts generate.Options) appRender {
	t.Helper()
	repo := loadRepo(t, files, "")
	asked := map[string]generate.Digest{}
	opts.Reuse = func(app string, d generate.Digest) bool {
		if _, dup := asked[app]; dup {
			t.Errorf("asked twice about %s", app)
		}
		asked[app] = d
		return false
	}
	opts.Workers = 1 // Reuse above is not safe for concurrent use
	f, err := generate.Render(repo, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(asked, f.Digests) {
		t.Fatalf("Fleet.Digests %v differ from the digests Reuse was asked with %v", f.Digests, asked)
	}
	r := appRender{digests: asked, files: map[string]map[string][]byte{}}
	for _, x := range f.Files {
		if x.App == "" {
			continue
		}
		if r.files[x.App] == nil {
			r.files[x.App] = map[string][]byte{}
		}
		r.files[x.App][x.Path] = x.Data
	}
	return r
}

func edit(files map[string][]byte, p, old, new string) map[string][]byte {
	out := maps.Clone(files)
	if !bytes.Contains(out[p], []byte(old)) {
		panic(p + " has no " + old)
	}
	out[p] = bytes.Replace(out[p], []byte(old), []byte(new), 1)
	return out
}

// Every input of an app's files is in its digest: a change to any of them
// changes the digest of the apps whose files it changes, and only of those
// that depend on it. Same digest, same files, always.
func TestDigestCoversEveryInput(t *testing.T) {
	t.Parallel()
	base := reuseBase()
	rev := func(a *load.LoadedApp) string { return "rev-" + a.Spec.Name }
	baseOpts := generate.Options{SpecRevision: rev}
	const (
		api, web, jobs, solo = "c1/shop/api", "c1/shop/web", "c1/shop/jobs", "c1/other/solo"
	)
	cases := []struct {
		name    string
		files   map[string][]byte
		opts    generate.Options
		changed []string // apps whose digest must change; the others must not
	}{
		{"nothing", base, baseOpts, nil},
		{"an image", edit(base, "apps/other/solo/app.yaml", "reg.test/solo:1", "reg.test/solo:2"), baseOpts, []string{solo}},
		// An app that takes exports from another is generated again when the
		// other's spec changes at all, not only when the exports do.
		{"the spec of an app others take exports from", edit(base, "apps/shop/api/app.yaml", "reg.test/api:1", "reg.test/api:2"), baseOpts, []string{api, web}},
		{"a port that another app's export reads", edit(base, "apps/shop/api/app.yaml", "port: 8080", "port: 8081"), baseOpts, []string{api, web}},
		{"the same value written differently", edit(base, "apps/other/solo/app.yaml", "port: 80}", "port: 80, }"), baseOpts, nil},
		{"a comment", edit(base, "apps/shop/web/app.yaml", "name: web\n", "name: web # the shop\n"), baseOpts, nil},
		{"the template", edit(base, "templates/worker/template.yaml", "--fast", "--slow"), baseOpts, []string{jobs}},
		{"the platform", edit(base, "platform.yaml", "a.test", "b.test"), baseOpts, []string{api, web, jobs, solo}},
		{"the fleet path", base, generate.Options{SpecRevision: rev, FleetPath: "elsewhere"}, []string{api, web, jobs, solo}},
		{"a spec revision", base, generate.Options{SpecRevision: func(a *load.LoadedApp) string {
			if a.Spec.Name == "solo" {
				return "rev-solo-2"
			}
			return rev(a)
		}}, []string{solo}},
		{"a built image", base, generate.Options{SpecRevision: rev, Images: map[string]string{"c1/shop/jobs/worker": "reg.test/jobs@sha256:0123"}}, []string{jobs}},
		{"an image set to what the spec says", base, generate.Options{SpecRevision: rev, Images: map[string]string{"c1/other/solo/web": "reg.test/solo:1"}}, []string{solo}},
		{"the spec file's folder", func() map[string][]byte {
			f := maps.Clone(base)
			f["apps/other2/solo/app.yaml"] = f["apps/other/solo/app.yaml"]
			delete(f, "apps/other/solo/app.yaml")
			return f
		}(), baseOpts, []string{solo}},
	}
	before := renderDigests(t, base, baseOpts)
	if len(before.digests) != 4 {
		t.Fatalf("digests of %d apps, want 4", len(before.digests))
	}
	for _, c := range cases {
		after := renderDigests(t, c.files, c.opts)
		for app, d := range before.digests {
			a, ok := after.digests[app]
			if !ok {
				continue // the app moved
			}
			if want := slices.Contains(c.changed, app); (a != d) != want {
				t.Errorf("%s: digest of %s changed: %v, want %v", c.name, app, a != d, want)
			}
			if a == d && !maps.EqualFunc(before.files[app], after.files[app], bytes.Equal) {
				t.Errorf("%s: the files of %s changed under the same digest", c.name, app)
			}
		}
		if c.name == "the spec file's folder" && len(after.digests) != 4 {
			t.Errorf("%s: %d digests", c.name, len(after.digests))
		}
	}
}

// An app that Reuse keeps is not generated: its files are left out and it
// is listed in Reused; the other apps and the project files are generated
// as always.
func TestReuseLeavesKeptAppsOut(t *testing.T) {
	t.Parallel()
	repo := loadRepo(t, reuseBase(), "")
	full, err := generate.Render(repo, generate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := generate.Render(repo, generate.Options{Reuse: func(app string, _ generate.Digest) bool {
		return strings.HasPrefix(app, "c1/shop/")
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"c1/shop/api", "c1/shop/jobs", "c1/shop/web"}; !slices.Equal(f.Reused, want) {
		t.Fatalf("Reused = %v, want %v", f.Reused, want)
	}
	if _, ok := f.Digests["c1/other/solo"]; !ok || len(f.Digests) != 1 {
		t.Fatalf("Digests hold %v, want c1/other/solo only", slices.Collect(maps.Keys(f.Digests)))
	}
	want := map[string][]byte{}
	for _, x := range full.Files {
		if x.App == "" || x.App == "c1/other/solo" {
			want[x.Path] = x.Data
		}
	}
	if got := f.Map(); !maps.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("with three apps kept, got %d files, want %d", len(got), len(want))
	}
}

// TestDigestCoversFileContent: a config file read from beside app.yaml
// (the loader puts it in File.Content and the document's digest; the
// document only names it) and an init container's cross-app export are
// inputs of the app's digest.
func TestDigestCoversFileContent(t *testing.T) {
	t.Parallel()
	files := reuseBase()
	files["apps/shop/conf/app.yaml"] = []byte(`name: conf
components:
  - name: web
    type: workload
    workload_spec:
      image: reg.test/conf:1
      files: [{path: /etc/conf.yaml, from: conf.yaml}]
      init_containers:
        - {name: wait, image: busybox:1.36, env: [{name: API, export_ref: {app: api, component: api, export_key: address}}]}
`)
	files["apps/shop/conf/conf.yaml"] = []byte("a: 1\n")
	digest := func(mutate func(*load.Repo)) generate.Digest {
		repo := loadRepo(t, files, "")
		mutate(repo)
		var got generate.Digest
		_, err := generate.Render(repo, generate.Options{Reuse: func(app string, d generate.Digest) bool {
			if strings.HasSuffix(app, "/conf") {
				got = d
			}
			return false
		}})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	conf := func(repo *load.Repo) *spec.WorkloadSpec {
		for _, a := range repo.Apps {
			if a.Spec.Name == "conf" {
				return a.Spec.Components[0].WorkloadSpec
			}
		}
		t.Fatal("no conf app")
		return nil
	}
	base := digest(func(*load.Repo) {})
	if again := digest(func(*load.Repo) {}); again != base {
		t.Fatal("digest not stable")
	}
	if got := *conf(loadRepo(t, files, "")).Files[0].Content; got != "a: 1\n" {
		t.Fatalf("the loader read %q from conf.yaml", got)
	}
	files["apps/shop/conf/conf.yaml"] = []byte("a: 2\n")
	if changed := digest(func(*load.Repo) {}); changed == base {
		t.Error("a changed file content kept the digest")
	}
	files["apps/shop/api/app.yaml"] = bytes.Replace(files["apps/shop/api/app.yaml"], []byte("port: 8080"), []byte("port: 8081"), 1)
	if moved := digest(func(*load.Repo) {}); moved == base {
		t.Error("the api's new port (an init container's export) kept the digest")
	}
}

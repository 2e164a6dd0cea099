package generate_test

import (
	"bytes"
	"maps"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// fluxSources decodes an app file whose components have OCI sources.
func fluxSources(t *testing.T, data []byte) (map[string]sourcev1.OCIRepository, map[string]kustomizev1.Kustomization) {
	t.Helper()
	repos := map[string]sourcev1.OCIRepository{}
	kss := map[string]kustomizev1.Kustomization{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var tm struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatal(err)
		}
		switch tm.Kind {
		case sourcev1.OCIRepositoryKind:
			var o sourcev1.OCIRepository
			if err := yaml.UnmarshalStrict([]byte(doc), &o); err != nil {
				t.Fatalf("%v\n%s", err, doc)
			}
			repos[o.Name] = o
		case kustomizev1.KustomizationKind:
			var k kustomizev1.Kustomization
			if err := yaml.UnmarshalStrict([]byte(doc), &k); err != nil {
				t.Fatalf("%v\n%s", err, doc)
			}
			kss[k.Name] = k
		default:
			t.Fatalf("unexpected %s in an app file:\n%s", tm.Kind, doc)
		}
	}
	return repos, kss
}

// With fleet.artifacts each component reads its own OCIRepository, pinned
// to the digest of its folder's artifact: a change in one component
// changes that digest and no other.
func TestComponentSources(t *testing.T) {
	t.Parallel()
	const platform = `apps_domain: apps.test
clusters: [{name: c, shards: [one, two]}]
build: {pin: false}
fleet:
  artifacts: {repository: registry.example.com/fleet/artifacts, secret_ref: fleet-pull, interval: 30m}
`
	app := func(image string) []byte {
		return []byte(`name: a
components:
  - {name: api, type: workload, workload_spec: {image: ` + image + `, port: 8080}}
  - name: worker
    type: workload
    workload_spec:
      image: x/worker:1
      env: [{name: API_URL, export_ref: {component: api, export_key: url}}]
  - {name: cron, type: workload, depends_on: [worker], workload_spec: {image: x/cron:1}}
`)
	}
	renderApp := func(image string) (*generate.Fleet, map[string][]byte) {
		repo := loadRepo(t, map[string][]byte{"platform.yaml": []byte(platform), "apps/p/a/app.yaml": app(image)}, "")
		f, err := generate.Render(repo, generate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return f, f.Map()
	}
	f, files := renderApp("x/api:1")
	if _, ok := files["clusters/c/apps/p-a.yaml"]; ok {
		t.Error("the app's Flux objects are in the cluster folder, which the root Kustomization applies")
	}
	repos, kss := fluxSources(t, files["apps/c/p/_flux/a.yaml"])
	arts, err := f.Artifacts()
	if err != nil {
		t.Fatal(err)
	}
	if len(arts) != 4 || len(f.ProjectArtifacts) != 1 || len(repos) != 3 || len(kss) != 3 {
		t.Fatalf("%d artifacts (%d of projects), %d OCIRepositories, %d Kustomizations; want 3 components' and 1 project's, 3, 3",
			len(arts), len(f.ProjectArtifacts), len(repos), len(kss))
	}
	projectDigest := checkProjectSource(t, files["clusters/c/projects/p.yaml"], f.ProjectArtifacts[0], files)
	digests := map[string]string{}
	for _, art := range arts[:3] {
		name := "p-a-" + art.Title[strings.LastIndexByte(art.Title, '/')+1:]
		o, k := repos[name], kss[name]
		digests[name] = o.Spec.Reference.Digest
		if o.Spec.URL != "oci://registry.example.com/fleet/artifacts" || o.Spec.Reference.Digest != art.Digest.String() ||
			o.Spec.SecretRef == nil || o.Spec.SecretRef.Name != "fleet-pull" || o.Spec.Interval.Duration.String() != "30m0s" || o.Spec.Provider != "" {
			t.Errorf("OCIRepository %s = %+v, want the artifact %s of %s", name, o.Spec, art.Digest, art.Title)
		}
		if k.Spec.SourceRef.Kind != sourcev1.OCIRepositoryKind || k.Spec.SourceRef.Name != name || k.Spec.Path != "./" {
			t.Errorf("Kustomization %s reads %+v at %q, want its OCIRepository at ./", name, k.Spec.SourceRef, k.Spec.Path)
		}
		if k.Labels[layout.LabelShard] == "" {
			t.Errorf("Kustomization %s has no shard label", name)
		}
		if _, ok := o.Labels[layout.LabelShard]; ok {
			t.Errorf("OCIRepository %s has a shard label", name)
		}
		if o.Annotations[layout.AnnotationArtifactPath] != art.Title {
			t.Errorf("OCIRepository %s: artifact path %q, want %q", name, o.Annotations[layout.AnnotationArtifactPath], art.Title)
		}
		if o.Labels[layout.LabelApp] != "a" || o.Annotations[layout.EventAnnotationPrefix+"component"] == "" {
			t.Errorf("OCIRepository %s labels %v annotations %v", name, o.Labels, o.Annotations)
		}
	}
	if deps := depNames(kss["p-a-cron"]); len(deps) != 1 || deps[0] != "p-a-worker" {
		t.Errorf("cron dependsOn %v, want [p-a-worker]", deps)
	}

	// One image changed: only the api's digest moves, and the project's
	// with it.
	f2, files2 := renderApp("x/api:2")
	repos2, _ := fluxSources(t, files2["apps/c/p/_flux/a.yaml"])
	for name, d := range digests {
		moved := repos2[name].Spec.Reference.Digest != d
		if moved != (name == "p-a-api") {
			t.Errorf("%s: digest moved = %v", name, moved)
		}
	}
	if checkProjectSource(t, files2["clusters/c/projects/p.yaml"], f2.ProjectArtifacts[0], files2) == projectDigest {
		t.Error("the project's digest did not move with its app's Flux file")
	}
}

// checkProjectSource checks a project's file (the Namespace, then the
// project's OCIRepository pinned to art and the Kustomization applying it)
// and that art holds the project's Flux files byte for byte; it returns
// the digest pinned.
func checkProjectSource(t *testing.T, data []byte, art *artifact.Artifact, files map[string][]byte) string {
	t.Helper()
	docs := strings.Split(string(data), "\n---\n")
	if len(docs) != 5 || !strings.Contains(docs[0], "kind: Namespace") || !strings.Contains(docs[1], "kind: ServiceAccount") || !strings.Contains(docs[2], "kind: RoleBinding") {
		t.Fatalf("project file:\n%s", data)
	}
	repos, kss := fluxSources(t, []byte(strings.Join(docs[3:], "\n---\n")))
	o, k := repos["project-p"], kss["project-p"]
	if o.Namespace != "p" || k.Namespace != "p" || k.Spec.ServiceAccountName != layout.ProjectServiceAccount {
		t.Errorf("project source in %s and %s, run as %q; want both in the project's namespace, run as its account", o.Namespace, k.Namespace, k.Spec.ServiceAccountName)
	}
	if o.Spec.Reference == nil || o.Spec.Reference.Digest != art.Digest.String() || o.Annotations[layout.AnnotationArtifactPath] != "apps/c/p/_flux" || art.Title != "apps/c/p/_flux" {
		t.Errorf("project OCIRepository %+v pins %s (%s)", o, art.Digest, art.Title)
	}
	if k.Spec.SourceRef.Kind != sourcev1.OCIRepositoryKind || k.Spec.SourceRef.Name != "project-p" || k.Spec.Path != "./" || !k.Spec.Prune || k.Spec.Wait || len(k.Spec.DependsOn) != 0 {
		t.Errorf("project Kustomization %+v", k.Spec)
	}
	if _, ok := k.Labels[layout.LabelShard]; ok {
		t.Errorf("project Kustomization has a shard label: %v", k.Labels)
	}
	got := map[string]string{}
	for _, f := range artifactFiles(t, art) {
		got[f.Name] = string(f.Data)
	}
	want := map[string]string{}
	for p, b := range files {
		if strings.HasPrefix(p, "apps/c/p/_flux/") {
			want[strings.TrimPrefix(p, "apps/c/p/_flux/")] = string(b)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("project artifact (-want +got):\n%s", diff)
	}
	return o.Spec.Reference.Digest
}

// artifactFiles unpacks an artifact's layer.
func artifactFiles(t *testing.T, art *artifact.Artifact) []artifact.File {
	t.Helper()
	files, err := artifact.Unpack(bytes.NewReader(art.Layer))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A fleet whose root Kustomization applies the apps' Flux objects from the
// cluster folder moves them to their project's source in two renders: the
// first keeps them there, marked not to be pruned, the second moves them.
// An app whose files are kept (Reuse) has its Flux file read back into
// the project's artifact.
func TestProjectSourcesMoveInTwoSteps(t *testing.T) {
	t.Parallel()
	const withArtifacts = "apps_domain: apps.test\nclusters: [{name: c}]\nbuild: {pin: false}\nfleet:\n  artifacts: {repository: registry.example.com/fleet}\n"
	apps := map[string][]byte{
		"apps/p/a/app.yaml": []byte("name: a\ncomponents:\n  - {name: api, type: workload, workload_spec: {image: x/api:1, port: 8080}}\n"),
		"apps/p/b/app.yaml": []byte("name: b\ncomponents:\n  - {name: web, type: workload, workload_spec: {image: x/web:1, port: 8080}}\n"),
	}
	repoWith := func(platform string) *load.Repo {
		files := maps.Clone(apps)
		files["platform.yaml"] = []byte(platform)
		return loadRepo(t, files, "")
	}
	render := func(repo *load.Repo, prev map[string][]byte, reuse func(string, generate.Digest) bool) (*generate.Fleet, map[string][]byte) {
		t.Helper()
		f, err := generate.Render(repo, generate.Options{Reuse: reuse, Workers: 1, Previous: generate.FileIn(prev)})
		if err != nil {
			t.Fatal(err)
		}
		return f, f.Map()
	}

	// The fleet as the layout without a source per project wrote it.
	_, before := render(repoWith("apps_domain: apps.test\nclusters: [{name: c}]\nbuild: {pin: false}\n"), nil, nil)
	if _, ok := before["clusters/c/apps/p-a.yaml"]; !ok {
		t.Fatal("the Git layout has no app file in the cluster folder")
	}

	// Step one: the Flux objects stay where the root applies them, each
	// marked; no project source yet.
	repo := repoWith(withArtifacts)
	f1, step1 := render(repo, before, nil)
	if diff := cmp.Diff([]string{"c/p/a", "c/p/b"}, f1.Preparing); diff != "" {
		t.Errorf("Preparing (-want +got):\n%s", diff)
	}
	for _, p := range []string{"clusters/c/apps/p-a.yaml", "clusters/c/apps/p-b.yaml"} {
		docs := strings.Split(string(step1[p]), "\n---\n")
		if len(docs) != 2 {
			t.Fatalf("%s:\n%s", p, step1[p])
		}
		for _, d := range docs {
			if !strings.Contains(d, "kustomize.toolkit.fluxcd.io/prune: disabled") {
				t.Errorf("%s: an object is not kept from pruning:\n%s", p, d)
			}
		}
	}
	if _, ok := step1["apps/c/p/_flux/a.yaml"]; ok || len(f1.ProjectArtifacts) != 0 || strings.Contains(string(step1["clusters/c/projects/p.yaml"]), "OCIRepository") {
		t.Error("step one already has a project source")
	}

	// Step two: the files move, without the marks, and the project's
	// source applies them. Reuse is not asked about apps that move.
	f2, step2 := render(repo, step1, func(app string, _ generate.Digest) bool {
		t.Errorf("Reuse asked about %s, which moves", app)
		return false
	})
	if len(f2.Preparing) != 0 || len(f2.ProjectArtifacts) != 1 {
		t.Fatalf("step two: preparing %v, %d project artifacts", f2.Preparing, len(f2.ProjectArtifacts))
	}
	for _, p := range []string{"clusters/c/apps/p-a.yaml", "clusters/c/apps/p-b.yaml"} {
		if _, ok := step2[p]; ok {
			t.Errorf("step two still writes %s", p)
		}
	}
	if strings.Contains(string(step2["apps/c/p/_flux/a.yaml"]), "prune: disabled") {
		t.Error("a moved app's objects are still kept from pruning")
	}
	checkProjectSource(t, step2["clusters/c/projects/p.yaml"], f2.ProjectArtifacts[0], step2)

	// A third render that keeps app a (its files are in place) reads its
	// Flux file back: the project's artifact is the same.
	f3, step3 := render(repo, step2, func(app string, _ generate.Digest) bool { return app == "c/p/a" })
	if diff := cmp.Diff([]string{"c/p/a"}, f3.Reused); diff != "" {
		t.Errorf("Reused (-want +got):\n%s", diff)
	}
	if f3.ProjectArtifacts[0].Digest != f2.ProjectArtifacts[0].Digest || !bytes.Equal(step3["clusters/c/projects/p.yaml"], step2["clusters/c/projects/p.yaml"]) {
		t.Error("keeping an app changed its project's artifact")
	}

	// Kept, but its Flux file unreadable: an error, not an artifact without it.
	delete(step2, "apps/c/p/_flux/a.yaml")
	if _, err := generate.Render(repo, generate.Options{Reuse: func(app string, _ generate.Digest) bool { return app == "c/p/a" }, Previous: generate.FileIn(step2)}); err == nil || !strings.Contains(err.Error(), "apps/c/p/_flux/a.yaml") {
		t.Errorf("render with a kept app's Flux file missing: %v", err)
	}
}

// A commit to an app's spec moves its spec revision, which every Flux
// object of the app names; a component whose folder did not change keeps
// its artifact (its HelmRelease does not name the spec revision), so Flux
// reconciles only the component that changed.
func TestSpecRevisionMovesNoUnchangedArtifact(t *testing.T) {
	t.Parallel()
	const platform = "apps_domain: apps.test\nclusters: [{name: c}]\nbuild: {pin: false}\nfleet:\n  artifacts: {repository: registry.example.com/fleet}\n"
	app := func(image string) []byte {
		return []byte(`name: a
components:
  - name: db
    type: addon
    addon_spec: {type: postgresql, chart: {repo: https://charts.example.com, name: postgresql, version: 13.4.4}}
  - name: api
    type: workload
    workload_spec:
      image: ` + image + `
      env: [{name: DATABASE_URL, export_ref: {component: db, export_key: connection_string}}]
`)
	}
	renderAt := func(image, rev string) map[string]sourcev1.OCIRepository {
		repo := loadRepo(t, map[string][]byte{"platform.yaml": []byte(platform), "apps/p/a/app.yaml": app(image)}, "")
		f, err := generate.Render(repo, generate.Options{SpecRevision: func(*load.LoadedApp) string { return rev }})
		if err != nil {
			t.Fatal(err)
		}
		repos, _ := fluxSources(t, f.Map()["apps/c/p/_flux/a.yaml"])
		return repos
	}
	before := renderAt("x/api:1", strings.Repeat("a", 40))
	after := renderAt("x/api:2", strings.Repeat("b", 40))
	if len(before) != 2 {
		t.Fatalf("%d OCIRepositories, want the db's and the api's", len(before))
	}
	for name, o := range before {
		moved := after[name].Spec.Reference.Digest != o.Spec.Reference.Digest
		if moved != (name == "p-a-api") {
			t.Errorf("%s: artifact moved = %v with a commit that changed the api's image", name, moved)
		}
		if got := after[name].Annotations[layout.AnnotationSpecRevision]; got != strings.Repeat("b", 40) {
			t.Errorf("%s names spec revision %q, want the new commit", name, got)
		}
	}
}

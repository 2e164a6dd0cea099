package generate_test

import (
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/generate"
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
		repo := load(t, map[string][]byte{"platform.yaml": []byte(platform), "apps/p/a/app.yaml": app(image)}, "")
		f, err := generate.Render(repo, generate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return f, f.Map()
	}
	f, files := renderApp("x/api:1")
	repos, kss := fluxSources(t, files["clusters/c/apps/p-a.yaml"])
	arts, err := f.ComponentArtifacts()
	if err != nil {
		t.Fatal(err)
	}
	if len(arts) != 3 || len(repos) != 3 || len(kss) != 3 {
		t.Fatalf("%d artifacts, %d OCIRepositories, %d Kustomizations; want 3 of each", len(arts), len(repos), len(kss))
	}
	digests := map[string]string{}
	for _, art := range arts {
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
		if k.Labels[generate.LabelShard] == "" {
			t.Errorf("Kustomization %s has no shard label", name)
		}
		if _, ok := o.Labels[generate.LabelShard]; ok {
			t.Errorf("OCIRepository %s has a shard label", name)
		}
		if o.Annotations[generate.AnnoArtifactPath] != art.Title {
			t.Errorf("OCIRepository %s: artifact path %q, want %q", name, o.Annotations[generate.AnnoArtifactPath], art.Title)
		}
		if o.Labels[generate.LabelApp] != "a" || o.Annotations[generate.EventPrefix+"component"] == "" {
			t.Errorf("OCIRepository %s labels %v annotations %v", name, o.Labels, o.Annotations)
		}
	}
	if deps := depNames(kss["p-a-cron"]); len(deps) != 1 || deps[0] != "p-a-worker" {
		t.Errorf("cron dependsOn %v, want [p-a-worker]", deps)
	}

	// One image changed: only the api's digest moves.
	_, files2 := renderApp("x/api:2")
	repos2, _ := fluxSources(t, files2["clusters/c/apps/p-a.yaml"])
	for name, d := range digests {
		moved := repos2[name].Spec.Reference.Digest != d
		if moved != (name == "p-a-api") {
			t.Errorf("%s: digest moved = %v", name, moved)
		}
	}
}

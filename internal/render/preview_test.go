package render_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

func previewPlatform() *spec.Platform {
	p := &spec.Platform{
		Clusters: []spec.Cluster{{Name: "stage-eu"}},
		Previews: &spec.Previews{Cluster: "stage-eu", AppsDomain: "preview.example.com", TTL: "24h", Max: 3},
	}
	load.ApplyPlatformDefaults(p)
	return p
}

const previewDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api-api
  namespace: shop-pr5
`

// The files of a preview stay in it: its folder and its Flux file only,
// the objects of a component folder in that folder's preview namespace,
// no object without a namespace but its Namespaces, which are the pull
// request's, ingress hosts under previews.apps_domain. Each case is a file
// as someone writing into the preview's folder by hand would write it.
func TestCheckPreviewFiles(t *testing.T) {
	t.Parallel()
	plat := previewPlatform()
	dir := layout.PreviewDir("stage-eu", 5) + "/"
	comp := dir + "apps/stage-eu/shop-pr5/api/api/"
	good := map[string][]byte{
		comp + "deployment-api-api.yaml": []byte(previewDeployment),
		comp + "ingress-api-api.yaml": []byte(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: api-api, namespace: shop-pr5}
spec:
  rules: [{host: api-shop-pr5.preview.example.com}]
  tls: [{hosts: [api-shop-pr5.preview.example.com]}]
`),
		comp + "kustomization.yaml":                      []byte("resources: [deployment-api-api.yaml]\n"),
		dir + "clusters/stage-eu/projects/shop-pr5.yaml": []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop-pr5}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: flux-reconciler, namespace: shop-pr5}\n"),
		"clusters/stage-eu/previews/pr-5.yaml":           []byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: preview-pr-5, namespace: flux-system}\n"),
	}
	if err := render.CheckPreviewFiles(plat, 5, "fleet", good); err != nil {
		t.Fatalf("a preview as render writes it: %v", err)
	}
	for name, tc := range map[string]struct {
		path, data, want string
	}{
		"another project's namespace":  {comp + "deployment-x.yaml", strings.Replace(previewDeployment, "shop-pr5", "bank-pr5", 1), "namespace bank-pr5 is not one of pull request #5's preview"},
		"the project's own namespace":  {comp + "deployment-x.yaml", strings.Replace(previewDeployment, "shop-pr5", "shop", 1), "namespace shop is not one of"},
		"another preview's namespace":  {comp + "deployment-x.yaml", strings.Replace(previewDeployment, "shop-pr5", "shop-pr6", 1), "namespace shop-pr6"},
		"cluster scope":                {comp + "crb.yaml", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: own-it}\n", "ClusterRoleBinding own-it: names no namespace"},
		"a production host":            {comp + "ingress-x.yaml", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: x, namespace: shop-pr5}\nspec:\n  rules: [{host: api.example.com}]\n", `host "api.example.com" is not under previews.apps_domain`},
		"a production TLS host":        {comp + "ingress-x.yaml", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: x, namespace: shop-pr5}\nspec:\n  tls: [{hosts: [api.example.com]}]\n", `TLS host "api.example.com"`},
		"a namespace like a preview's": {dir + "clusters/stage-eu/projects/shop-pr05.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop-pr05}\n", "Namespace shop-pr05: not a namespace of pull request #5's preview (<project>-pr5)"},
		"another namespace created":    {dir + "clusters/stage-eu/projects/kube.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-system}\n", "Namespace kube-system: not a namespace of pull request #5's preview"},
		"an environment's path":        {"apps/stage-eu/shop/api/api/deployment-api-api.yaml", previewDeployment, "outside the preview's folder previews/stage-eu/pr-5"},
		"another preview's folder":     {"previews/stage-eu/pr-6/x.yaml", previewDeployment, "outside the preview's folder"},
		"a second Flux object":         {"clusters/stage-eu/previews/pr-5.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: everything, namespace: flux-system}\n", "holds its Kustomization flux-system/preview-pr-5 only"},
		"a workload in flux-system":    {comp + "deployment-x.yaml", strings.Replace(previewDeployment, "shop-pr5", "flux-system", 1), "only Flux objects of the preview may live in flux-system"},
		"an environment's folder":      {dir + "clusters/stage-eu/apps/shop-pr5-x.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: x, namespace: shop-pr5}\nspec: {path: ./fleet/apps/stage-eu/shop/api/api, targetNamespace: shop-pr5}\n", "path ./fleet/apps/stage-eu/shop/api/api is not in the preview's folder ./fleet/previews/stage-eu/pr-5"},
		"the cluster's root":           {"clusters/stage-eu/previews/pr-5.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: preview-pr-5, namespace: flux-system}\nspec: {path: ./fleet/previews/stage-eu/pr-5/../../../clusters/stage-eu}\n", "is not in the preview's folder"},
		"another namespace's events":   {dir + "clusters/stage-eu/projects/shop-pr5-alert.yaml", "apiVersion: notification.toolkit.fluxcd.io/v1beta3\nkind: Alert\nmetadata: {name: fleetwright-shop-pr5, namespace: flux-system}\nspec:\n  eventSources: [{kind: Kustomization, name: '*', namespace: bank}]\n", `it sends the events of namespace "bank"`},
		"an Alert of another name":     {dir + "clusters/stage-eu/projects/shop-pr5-alert.yaml", "apiVersion: notification.toolkit.fluxcd.io/v1beta3\nkind: Alert\nmetadata: {name: everything, namespace: flux-system}\n", "a preview's Alert is fleetwright-<its namespace>"},
		"a target elsewhere":           {dir + "clusters/stage-eu/apps/shop-pr5-x.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: x, namespace: shop-pr5}\nspec: {targetNamespace: shop}\n", "targetNamespace shop is not one of the preview's"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			files := map[string][]byte{}
			for k, v := range good {
				files[k] = v
			}
			files[tc.path] = []byte(tc.data)
			err := render.CheckPreviewFiles(plat, 5, "fleet", files)
			var pe *render.PreviewError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("got %v, want an error at %s saying %q", err, tc.path, tc.want)
			}
		})
	}
}

// The previews of the fleet are read from their Flux files and records; a
// preview last updated longer than previews.ttl ago has expired, and
// keeping the others carries every file their records list.
func TestReadPreviewsExpired(t *testing.T) {
	t.Parallel()
	plat := previewPlatform()
	t0 := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	files := map[string][]byte{}
	add := func(pr int, updated time.Time) {
		own := layout.PreviewDir("stage-eu", pr) + "/apps/x.yaml"
		rec := &generate.PreviewRecord{PullRequest: pr, Environment: layout.PreviewEnvironment(pr), Head: "abc", Apps: []string{"shop/api"},
			Created: t0, Updated: updated, Files: []string{layout.PreviewFile(plat, "stage-eu", pr), own}}
		b, err := generate.PreviewRecordData(rec)
		if err != nil {
			t.Fatal(err)
		}
		files[layout.PreviewRecordFile("stage-eu", pr)] = b
		files[layout.PreviewFile(plat, "stage-eu", pr)] = []byte("k")
		files[own] = []byte("x")
	}
	add(1, t0)
	add(2, t0.Add(20*time.Hour))
	files[layout.PreviewFile(plat, "stage-eu", 3)] = []byte("no record")
	read := func(p string) ([]byte, bool) { b, ok := files[p]; return b, ok }
	open, warnings := render.ReadPreviews(plat, read, generate.FilesIn(files))
	if len(open) != 2 || len(warnings) != 1 || warnings[0].PR != 3 || !strings.Contains(warnings[0].Warning, "preview pr-3 has no record") {
		t.Fatalf("open %v, warnings %v", open, warnings)
	}
	exp := render.Expired(plat, open, t0.Add(30*time.Hour))
	if len(exp) != 1 || exp[0].PR != 1 {
		t.Fatalf("expired %v", exp)
	}
	keep := render.KeepPreviews(open, map[int]bool{1: true})
	if len(keep) != 3 || keep[layout.PreviewDir("stage-eu", 2)+"/apps/x.yaml"] == nil {
		t.Errorf("kept %v", keep)
	}
}

// FuzzCheckPreviewFiles: a preview's files come from the fleet, where
// anyone with write access may edit them; checking them never panics, and
// a file outside the preview's folder is always refused.
func FuzzCheckPreviewFiles(f *testing.F) {
	plat := previewPlatform()
	f.Add("previews/stage-eu/pr-5/apps/stage-eu/shop-pr5/api/api/d.yaml", []byte(previewDeployment))
	f.Add("clusters/stage-eu/previews/pr-5.yaml", []byte("kind: Kustomization\nmetadata: {name: preview-pr-5, namespace: flux-system}\nspec: {path: ./fleet/previews/stage-eu/pr-5}\n"))
	f.Add("previews/stage-eu/pr-5/x.yaml", []byte("kind: Ingress\nmetadata: {namespace: shop-pr5}\nspec: {rules: [{host: a.preview.example.com}], tls: [{hosts: [b]}]}\n---\nkind: Namespace\n"))
	f.Add("apps/stage-eu/shop/api/api/d.yaml", []byte("&a [*a, *a]"))
	f.Fuzz(func(t *testing.T, p string, data []byte) {
		err := render.CheckPreviewFiles(plat, 5, "fleet", map[string][]byte{p: data})
		if !strings.HasPrefix(p, "previews/stage-eu/pr-5/") && p != "clusters/stage-eu/previews/pr-5.yaml" && err == nil {
			t.Fatalf("%q outside the preview accepted", p)
		}
	})
}

// The apps a pull request changes: those whose folder differs from the
// merge base with the base, and those whose stack template does; not
// those only the base changed since.
func TestChangedApps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(msg string) {
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "-m", msg)
	}
	app := func(name, image string) string {
		return "name: " + name + "\ncomponents:\n  - {name: web, type: workload, workload_spec: {image: " + image + ", port: 80}}\n"
	}
	worker := func(concurrency int) string {
		return fmt.Sprintf("name: worker\nversion: 1.0.0\nparameters:\n  - {name: image, type: string, required: true}\n"+
			"components:\n  - name: worker\n    type: workload\n    workload_spec: {image: \"${{ params.image }}\", args: [--concurrency=%d]}\n", concurrency)
	}
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	write("apps/shop/api/app.yaml", app("api", "myorg/api:1"))
	write("apps/shop/docs/app.yaml", app("docs", "myorg/docs:1"))
	write("apps/shop/old/app.yaml", app("old", "myorg/old:1"))
	write("apps/shop/jobs/app.yaml", "name: jobs\ntemplate: {name: worker, parameters: {image: myorg/jobs:1}}\n")
	write("templates/worker/template.yaml", worker(4))
	commit("first")
	gittest.Git(t, dir, "checkout", "-q", "-b", "feature")
	write("apps/shop/api/app.yaml", app("api", "myorg/api:2"))
	write("templates/worker/template.yaml", worker(8))
	commit("api 2, workers of 8")
	gittest.Git(t, dir, "checkout", "-q", "main")
	write("apps/shop/old/app.yaml", app("old", "myorg/old:2")) // main moved on
	commit("old 2")

	g, err := render.OpenGit(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	repo, ps, err := render.Load(context.Background(), g.At("feature"))
	if err != nil || ps.HasErrors() {
		t.Fatal(err, ps)
	}
	got, err := g.ChangedApps(context.Background(), "main", "feature", repo)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"shop/api", "shop/jobs"}; !slices.Equal(got, want) {
		t.Errorf("changed apps %v, want %v", got, want)
	}
}

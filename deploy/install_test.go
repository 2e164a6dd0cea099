package deploy

import (
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spectest"
	"github.com/fleetwright/fleetwright/internal/testenv"
	"github.com/fleetwright/fleetwright/test/cluster"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// block is a fenced block of docs/install.md.
type block struct{ lang, text string }

var fence = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```\n")

func installBlocks(t *testing.T) []block {
	t.Helper()
	doc, err := os.ReadFile("../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	for _, m := range fence.FindAllStringSubmatch(string(doc), -1) {
		out = append(out, block{m[1], m[2]})
	}
	if len(out) < 8 {
		t.Fatalf("docs/install.md has %d fenced blocks", len(out))
	}
	return out
}

// fileBlock returns the YAML block whose first line is "# name".
func fileBlock(t *testing.T, blocks []block, name string) []byte {
	t.Helper()
	for _, b := range blocks {
		if b.lang == "yaml" && strings.HasPrefix(b.text, "# "+name+"\n") {
			return []byte(b.text)
		}
	}
	t.Fatalf("docs/install.md shows no file %s", name)
	return nil
}

// commands returns the shell lines of the page, continuation lines joined.
func commands(blocks []block) []string {
	var out []string
	for _, b := range blocks {
		if b.lang != "sh" {
			continue
		}
		for _, l := range strings.Split(strings.ReplaceAll(b.text, "\\\n", " "), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// installNotificationCRDs installs notification-controller's CRDs (from
// the cluster binaries' folder, see test/cluster) in the test API server.
func installNotificationCRDs(t *testing.T) {
	t.Helper()
	_, bin, err := cluster.BinDirs(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(bin, "notification-controller-*", "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no notification-controller CRDs under %s (%v): run bash hack/cluster/build.sh", bin, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crds, err := testenv.DecodeCRDs(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range crds {
			if err := env.Client.Create(t.Context(), c); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
	}
}

// dryRun sends one object to the API server, waiting while its kind is
// not yet served (a CRD just created).
func dryRun(t *testing.T, doc []byte) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		err := env.DryRunApply(ctx, doc)
		if err == nil || !strings.Contains(err.Error(), "no matches for kind") || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestInstallPage follows docs/install.md: its platform.yaml, its
// bootstrap path, its lockdown file, its Secrets, and step 5's copy of
// deploy/ with the overlay it shows, built as kustomize-controller builds
// it and sent object by object to the API server.
func TestInstallPage(t *testing.T) {
	blocks := installBlocks(t)
	cmds := commands(blocks)
	ctx := t.Context()

	// 1. platform.yaml is valid, and a first app renders with it.
	platform := fileBlock(t, blocks, "apps/platform.yaml")
	l := spectest.Loader(t)
	repo, ps := l.LoadFiles(map[string][]byte{
		"platform.yaml": platform,
		"apps/shop/hello/app.yaml": []byte("name: hello\ncomponents:\n  - name: web\n    type: workload\n" +
			"    workload_spec: {image: nginxinc/nginx-unprivileged:1.27, port: 8080, ingress: {enabled: true}}\n"),
	})
	if ps.HasErrors() {
		t.Fatalf("step 1's platform.yaml: %v", ps)
	}
	plat := &repo.Platform
	fleet, err := generate.Render(repo, generate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files := fleet.Map()

	// 2. flux bootstrap at the folder render writes the cluster's files to.
	clusterDir := path.Join(plat.Fleet.Path, layout.ClusterDir(plat, "prod-eu"))
	var bootstrap string
	for _, c := range cmds {
		if strings.HasPrefix(c, "flux bootstrap ") {
			bootstrap = c
		}
	}
	if !strings.Contains(bootstrap, " --path="+clusterDir+"") {
		t.Errorf("bootstrap command %q does not name --path=%s, where render writes the cluster's Flux files", bootstrap, clusterDir)
	}

	// 3. The lockdown file, over the bootstrap's.
	if !slicesContainsAll(cmds, "/deploy/flux/kustomization.yaml", clusterDir+"/flux-system/kustomization.yaml") {
		t.Errorf("step 3 does not copy deploy/flux/kustomization.yaml over %s/flux-system/kustomization.yaml", clusterDir)
	}
	lockdown, err := os.ReadFile("flux/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The projects' Alerts are in flux-system and read their namespaces'
	// events: notification-controller must stay out of the lockdown.
	for _, m := range regexp.MustCompile(`(?m)^      name: "?([^"\n]+)"?$`).FindAllStringSubmatch(string(lockdown), -1) {
		if regexp.MustCompile("^(?:" + m[1] + ")$").MatchString("notification-controller") {
			t.Errorf("deploy/flux/kustomization.yaml patches notification-controller (target %q): the projects' Alerts would hear nothing", m[1])
		}
	}

	// Every file of the release the page copies exists.
	for _, m := range regexp.MustCompile(`/tmp/fleetwright-X\.Y\.Z/(\S+)`).FindAllStringSubmatch(strings.Join(cmds, "\n"), -1) {
		for _, p := range expandBraces(m[1]) {
			if got, err := filepath.Glob(filepath.Join("..", filepath.FromSlash(p))); err != nil || len(got) == 0 {
				t.Errorf("the page copies %s, which the release does not hold", p)
			}
		}
	}

	// 5. The copy of deploy/ and the overlay, laid out as a fleet repository.
	fleetRoot := t.TempDir()
	cp := regexp.MustCompile(`^cp /tmp/fleetwright-X\.Y\.Z/deploy/(\S+) (\S+)/$`)
	copied := 0
	for _, c := range cmds {
		m := cp.FindStringSubmatch(c)
		if m == nil {
			continue
		}
		src, err := filepath.Glob(filepath.FromSlash(m[1]))
		if err != nil || len(src) == 0 {
			t.Fatalf("%q copies nothing (%v)", c, err)
		}
		dst := filepath.Join(fleetRoot, filepath.FromSlash(m[2]))
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, s := range src {
			b, err := os.ReadFile(s)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, filepath.Base(s)), b, 0o644); err != nil {
				t.Fatal(err)
			}
			copied++
		}
	}
	if copied < 10 {
		t.Fatalf("step 5 copies %d files of deploy/", copied)
	}
	overlay := path.Join(clusterDir, "fleetwright/kustomization.yaml")
	if err := os.WriteFile(filepath.Join(fleetRoot, filepath.FromSlash(overlay)), fileBlock(t, blocks, overlay), 0o644); err != nil {
		t.Fatal(err)
	}
	// As kustomize-controller with --no-remote-bases: the folder alone.
	opts := krusty.MakeDefaultOptions()
	res, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), filepath.Join(fleetRoot, filepath.FromSlash(path.Dir(overlay))))
	if err != nil {
		t.Fatalf("building %s: %v", overlay, err)
	}

	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flux-system"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	installNotificationCRDs(t)
	kinds := map[string]bool{}
	var all bytes.Buffer
	for _, r := range res.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		kinds[r.GetKind()+"/"+r.GetName()] = true
		if r.GetNamespace() != "flux-system" && !strings.HasPrefix(r.GetKind(), "ClusterRole") {
			t.Errorf("%s/%s is in %q, not flux-system", r.GetKind(), r.GetName(), r.GetNamespace())
		}
		if err := dryRun(t, b); err != nil {
			t.Errorf("%s/%s: the API server refused it: %v", r.GetKind(), r.GetName(), err)
		}
		switch r.GetKind() {
		case "Ingress":
			var ing networkingv1.Ingress
			if err := yaml.UnmarshalStrict(b, &ing); err != nil {
				t.Fatal(err)
			}
			if ing.Spec.Rules[0].Host != "status.example.com" || ing.Spec.TLS[0].Hosts[0] != "status.example.com" ||
				ing.Annotations["cert-manager.io/cluster-issuer"] != "letsencrypt" {
				t.Errorf("the Ingress after the overlay: %+v", ing)
			}
			for _, p := range ing.Spec.Rules[0].HTTP.Paths {
				if strings.HasPrefix("/hooks/flux", p.Path) && *p.PathType == networkingv1.PathTypePrefix || p.Path == "/metrics" {
					t.Errorf("the Ingress routes %s: Flux's events and metrics stay inside the cluster", p.Path)
				}
			}
		case "Deployment":
			var d appsv1.Deployment
			if err := yaml.UnmarshalStrict(b, &d); err != nil {
				t.Fatal(err)
			}
			if c := d.Spec.Template.Spec.Containers[0]; c.Image != "ghcr.io/fleetwright/fleetwright:vX.Y.Z" || !contains(c.Args, "-cluster-name=prod-eu") {
				t.Errorf("the webhook after the overlay: image %s, args %v", c.Image, c.Args)
			}
		}
	}
	for _, want := range []string{"Deployment/fleetwright-webhook", "ClusterRole/fleetwright-webhook", "Ingress/fleetwright-webhook",
		"Provider/fleetwright", "Alert/fleetwright", "Receiver/fleet"} {
		if !kinds[want] {
			t.Errorf("step 5 does not apply %s", want)
		}
	}

	// 4. Every Secret the objects read is one step 4 creates.
	for _, ref := range regexp.MustCompile(`(?m)(?:secretName|name): (fleet[a-z-]*(?:hmac|api|token))$`).FindAllStringSubmatch(all.String(), -1) {
		if !slicesContainsAll(cmds, "create secret generic "+ref[1]+" ") {
			t.Errorf("the objects read the Secret %s, which step 4 does not create", ref[1])
		}
	}

	// 7. The first app's project gets its Alert, which names the Provider
	// of step 5, from render.
	proj, ok := files[layout.ProjectFile(plat, "prod-eu", "shop")]
	if !ok {
		t.Fatal("render wrote no project file for shop")
	}
	alerts := 0
	for _, doc := range strings.Split(string(proj), "\n---\n") {
		if !strings.Contains(doc, "\nkind: Alert\n") {
			continue
		}
		alerts++
		if d := doc + "\n"; !strings.Contains(d, "name: fleetwright\n") || !strings.Contains(d, "namespace: shop\n") {
			t.Errorf("the project's Alert:\n%s", doc)
		}
		if err := dryRun(t, []byte(doc)); err != nil {
			t.Errorf("the project's Alert: the API server refused it: %v", err)
		}
	}
	if alerts != 1 {
		t.Errorf("the project's file holds %d Alerts, want 1:\n%s", alerts, proj)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// slicesContainsAll reports whether one line holds every part.
func slicesContainsAll(lines []string, parts ...string) bool {
	for _, l := range lines {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// expandBraces expands one {a,b} group of a shell word.
func expandBraces(w string) []string {
	i, j := strings.Index(w, "{"), strings.Index(w, "}")
	if i < 0 || j < i {
		return []string{w}
	}
	var out []string
	for _, alt := range strings.Split(w[i+1:j], ",") {
		out = append(out, w[:i]+alt+w[j+1:])
	}
	return out
}

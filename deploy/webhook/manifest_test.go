// Package webhook holds the kustomize base that runs the fleetwright
// webhook next to Flux; its tests build the base and send every object to
// the test kube-apiserver.
package webhook

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/testenv"
	"github.com/fleetwright/fleetwright/internal/webhook"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// build runs kustomize on the base, as kubectl apply -k would.
func build(t *testing.T) map[string][]byte {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), ".")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{}
	for _, r := range res.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		docs[r.GetKind()+"/"+r.GetName()] = b
	}
	return docs
}

func dryRun(t *testing.T, doc []byte) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flux-system"}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return env.DryRunApply(ctx, doc)
}

// TestBaseIsValid builds the base and has the API server check each
// object (a server-side dry run: schema, unknown fields, defaults).
func TestBaseIsValid(t *testing.T) {
	docs := build(t)
	var kinds []string
	for name, doc := range docs {
		kinds = append(kinds, name)
		if err := dryRun(t, doc); err != nil {
			t.Errorf("%s: the API server refused it: %v", name, err)
		}
		if !bytes.Contains(doc, []byte("namespace: flux-system")) && !strings.HasPrefix(name, "ClusterRole") {
			t.Errorf("%s is not in flux-system:\n%s", name, doc)
		}
	}
	slices.Sort(kinds)
	want := []string{
		"ClusterRole/fleetwright-webhook", "ClusterRoleBinding/fleetwright-webhook", "Deployment/fleetwright-webhook",
		"NetworkPolicy/fleetwright-webhook", "PersistentVolumeClaim/fleetwright-webhook-data",
		"Service/fleetwright-webhook", "ServiceAccount/fleetwright-webhook",
	}
	if !slices.Equal(kinds, want) {
		t.Errorf("objects = %v, want %v", kinds, want)
	}
}

// TestDryRunRefusesBadField makes sure the check above can fail.
func TestDryRunRefusesBadField(t *testing.T) {
	doc := build(t)["Deployment/fleetwright-webhook"]
	bad := bytes.Replace(doc, []byte("readOnlyRootFilesystem: true"), []byte("readOnlyRootFilesystem: true\n          runAsRoot: true"), 1)
	if bytes.Equal(bad, doc) {
		t.Fatal("no readOnlyRootFilesystem in the Deployment")
	}
	if err := dryRun(t, bad); err == nil || !strings.Contains(err.Error(), "runAsRoot") {
		t.Errorf("an unknown field was accepted: %v", err)
	}
}

// TestBaseMatchesImageAndCommand checks the Deployment against what it
// runs: the image's user, the webhook's flags, and the port the Service
// and the NetworkPolicy name.
func TestBaseMatchesImageAndCommand(t *testing.T) {
	t.Parallel()
	docs := build(t)
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(docs["Deployment/fleetwright-webhook"], &d); err != nil {
		t.Fatal(err)
	}
	dockerfile, err := os.ReadFile("../../hack/image/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	user := regexp.MustCompile(`(?m)^USER (\d+):(\d+)$`).FindSubmatch(dockerfile)
	sc := d.Spec.Template.Spec.SecurityContext
	if user == nil || sc == nil || sc.RunAsUser == nil || sc.RunAsGroup == nil ||
		string(user[1]) != itoa(*sc.RunAsUser) || string(user[2]) != itoa(*sc.RunAsGroup) || !*sc.RunAsNonRoot {
		t.Errorf("pod security context %+v does not run as the image's user %q", sc, user)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "ghcr.io/fleetwright/fleetwright:v0.1.0" {
		t.Errorf("image %q", c.Image)
	}
	run, err := os.ReadFile("../../cmd/webhook/run.go")
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`fs\.\w+Var\(&o\.\w+, "([a-z0-9-]+)"`).FindAllSubmatch(run, -1) {
		flags[string(m[1])] = true
	}
	if len(flags) < 10 {
		t.Fatalf("read %d flags from cmd/webhook/run.go", len(flags))
	}
	listen := ""
	for _, a := range c.Args {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if !flags[name] {
			t.Errorf("argument %q: the webhook has no flag %q", a, name)
		}
		if name == "listen" {
			listen = value
		}
	}
	if len(c.Ports) != 1 || ":"+itoa(int64(c.Ports[0].ContainerPort)) != listen || c.Ports[0].Name != "http" {
		t.Errorf("container ports %+v, -listen=%s", c.Ports, listen)
	}
	var svc corev1.Service
	if err := yaml.UnmarshalStrict(docs["Service/fleetwright-webhook"], &svc); err != nil {
		t.Fatal(err)
	}
	if p := svc.Spec.Ports[0]; p.Port != 8080 || p.TargetPort.String() != "http" {
		t.Errorf("service port %+v, want 8080 to the container's http port (the Flux Provider's address)", p)
	}
	var np networkingv1.NetworkPolicy
	if err := yaml.UnmarshalStrict(docs["NetworkPolicy/fleetwright-webhook"], &np); err != nil {
		t.Fatal(err)
	}
	if p := np.Spec.Ingress[0].Ports[0].Port; p == nil || p.String() != "http" {
		t.Errorf("network policy ingress port %v, want the container's http port", p)
	}
	if got := np.Spec.PodSelector.MatchLabels; got["app.kubernetes.io/name"] != d.Spec.Template.Labels["app.kubernetes.io/name"] {
		t.Errorf("network policy selects %v, the pods are labelled %v", got, d.Spec.Template.Labels)
	}
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// TestDocsShowTheBase checks that docs/webhook.md shows the base's
// manifests as they are.
func TestDocsShowTheBase(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/webhook.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"deployment.yaml", "service.yaml", "networkpolicy.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(doc, append(append([]byte("```yaml\n"), b...), "```\n"...)) {
			t.Errorf("docs/webhook.md does not show deploy/webhook/%s as it is; copy it there", f)
		}
	}
}

// TestRoleGrantsTheReads checks that the ClusterRole lets the webhook make
// the reads its checks and event mapping make (internal/probe,
// internal/webhook), and no write.
func TestRoleGrantsTheReads(t *testing.T) {
	t.Parallel()
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(build(t)["ClusterRole/fleetwright-webhook"], &role); err != nil {
		t.Fatal(err)
	}
	allows := func(group, resource, verb string) bool {
		return slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
		})
	}
	for _, want := range []struct{ group, resource, verb string }{
		{"kustomize.toolkit.fluxcd.io", "kustomizations", "list"},
		{"kustomize.toolkit.fluxcd.io", "kustomizations", "get"},
		{"source.toolkit.fluxcd.io", "ocirepositories", "get"},
		{"helm.toolkit.fluxcd.io", "helmreleases", "get"},
		{"apps", "deployments", "list"},
		{"apps", "statefulsets", "list"},
		{"networking.k8s.io", "ingresses", "list"},
		{"", "pods", "list"},
		{"", "pods/log", "get"},
		{"", "events", "list"},
	} {
		if !allows(want.group, want.resource, want.verb) {
			t.Errorf("the ClusterRole does not allow %s on %s.%s", want.verb, want.resource, want.group)
		}
	}
	for _, r := range role.Rules {
		for _, v := range r.Verbs {
			if v != "get" && v != "list" {
				t.Errorf("rule %+v allows %s: the webhook only reads", r, v)
			}
		}
	}
}

// TestOIDCComponent builds an overlay with the oidc component and checks
// it: the API server takes every object, the flags exist, the client
// secret comes from a Secret and the access file parses.
func TestOIDCComponent(t *testing.T) {
	// The overlay sits outside the base, as in a fleet repository
	// (kustomize refuses an overlay inside its base).
	base, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kust, err := os.ReadFile("testdata/oidc-overlay/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, base)
	if err != nil {
		t.Fatal(err)
	}
	kust = bytes.Replace(kust, []byte("  - ../../oidc\n"), []byte("  - "+rel+"/oidc\n"), 1)
	kust = bytes.Replace(kust, []byte("  - ../..\n"), []byte("  - "+rel+"\n"), 1)
	accessFile, err := os.ReadFile("testdata/oidc-overlay/access.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if os.WriteFile(filepath.Join(dir, "kustomization.yaml"), kust, 0o644) != nil || os.WriteFile(filepath.Join(dir, "access.yaml"), accessFile, 0o644) != nil {
		t.Fatal("writing the overlay")
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var (
		d      appsv1.Deployment
		access []byte
	)
	for _, r := range res.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		if err := dryRun(t, b); err != nil {
			t.Errorf("%s/%s: the API server refused it: %v", r.GetKind(), r.GetName(), err)
		}
		switch {
		case r.GetKind() == "Deployment":
			if err := yaml.UnmarshalStrict(b, &d); err != nil {
				t.Fatal(err)
			}
		case r.GetKind() == "ConfigMap" && strings.HasPrefix(r.GetName(), "fleetwright-webhook-access-"):
			var cm corev1.ConfigMap
			if err := yaml.UnmarshalStrict(b, &cm); err != nil {
				t.Fatal(err)
			}
			access = []byte(cm.Data["access.yaml"])
		case r.GetKind() == "Secret":
			t.Errorf("the overlay holds a Secret %s: the client secret stays out of Git", r.GetName())
		}
	}
	if _, err := webhook.ParseAccess("access.yaml", access); err != nil || len(access) == 0 {
		t.Errorf("the access file of the overlay: %v (%d bytes)", err, len(access))
	}
	c := d.Spec.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"-oidc-issuer=$(OIDC_ISSUER)", "-oidc-client-id=$(OIDC_CLIENT_ID)", "-oidc-redirect-url=$(OIDC_REDIRECT_URL)",
		"-oidc-client-secret-file=/etc/fleetwright/oidc/client-secret", "-access-file=/etc/fleetwright/access/access.yaml", "-in-cluster"} {
		if !strings.Contains(args, want) {
			t.Errorf("the webhook's arguments %q lack %s", args, want)
		}
	}
	secretFromSecret := false
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "oidc" && v.Secret != nil && v.Secret.SecretName == "fleetwright-webhook-oidc" {
			secretFromSecret = true
		}
	}
	if !secretFromSecret {
		t.Error("the client secret is not mounted from the Secret fleetwright-webhook-oidc")
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil || !strings.HasPrefix(e.ValueFrom.ConfigMapKeyRef.Name, "fleetwright-webhook-oidc-") {
			t.Errorf("env %s does not come from the generated ConfigMap: %+v", e.Name, e)
		}
	}
}

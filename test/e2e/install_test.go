package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/golden"
)

// TestInstallJourney follows docs/install.md on the journey's cluster,
// with Flux's lockdown on: the lockdown file of deploy/flux over the
// bootstrap's, the Secrets, step 5's copy of deploy/ with the page's
// overlay in the cluster folder, platform.yaml with fleet.artifacts and
// fleet.notifications, and a first app. Flux applies all of it; the
// webhook runs as the base's ServiceAccount (its kubeconfig impersonates
// it, so the shipped ClusterRole is its only grant) and hears of the app
// only through deploy/notifications' Provider and the Alert render wrote
// in the project's file; the app's page then shows it running, with its
// pods and events.
//
// Where it departs from the page, because the test has no container
// runtime, no GitHub and no flux CLI: the webhook runs as a process on
// loopback rather than as the Deployment (which Flux applies all the same),
// so the overlay also points the Provider at that process; bootstrap is
// the journey's (the GitRepository and root Kustomization flux bootstrap
// writes, with a gotk-components.yaml that holds only the namespace).
func TestInstallJourney(t *testing.T) {
	j := newJourney(t)
	const app, user = "hello", "system:serviceaccount:flux-system:fleetwright-webhook"
	appPath := "/api/v1/apps/" + project + "/" + app

	// The first app's image, in the journey's registry, so render pins it.
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	imageRef := j.reg.Host() + "/install/hello:1.0.0"
	ref, err := name.ParseReference(imageRef)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}

	j.clusterUp()
	j.ing = startIngress(t, j.c.Client, "unused.apps.journey.test")
	j.gh.Expect("POST", "/repos/"+fleetRepo+"/deployments").Between(0, 40)
	j.gh.Expect("POST", "/repos/"+fleetRepo+"/deployments/*/statuses").Between(0, 200)
	// The webhook reads the cluster as its ServiceAccount.
	admin := j.c.Kubeconfig
	j.c.Kubeconfig = impersonating(t, admin, user)
	j.startWebhook()
	j.c.Kubeconfig = admin

	// Step 4: the Secrets.
	for name, value := range map[string]string{"fleetwright-webhook-hmac": hmacKey, "fleetwright-webhook-api": apiToken, "fleet-receiver-token": "receiver-token"} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fluxNS}, StringData: map[string]string{"token": value}}
		if err := j.c.Client.Create(j.ctx, s); err != nil {
			t.Fatal(err)
		}
	}

	// Steps 3 and 5, committed to the fleet repository.
	fleetDir := j.cloneFleet("main")
	clusterDir := filepath.Join(fleetDir, "fleet", "clusters", clusterName)
	copyFile(t, "../../deploy/flux/kustomization.yaml", filepath.Join(clusterDir, "flux-system", "kustomization.yaml"))
	golden.WriteFile(t, filepath.Join(clusterDir, "flux-system", "gotk-components.yaml"),
		"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n")
	page, err := os.ReadFile("../../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	cp := regexp.MustCompile(`(?m)^cp /tmp/fleetwright-X\.Y\.Z/deploy/(\S+) fleet/clusters/prod-eu/(\S+)/$`)
	for _, m := range cp.FindAllStringSubmatch(string(page), -1) {
		files, err := filepath.Glob(filepath.Join("../../deploy", filepath.FromSlash(m[1])))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s copies nothing", m[0])
		}
		for _, f := range files {
			copyFile(t, f, filepath.Join(clusterDir, filepath.FromSlash(m[2]), filepath.Base(f)))
		}
	}
	overlay := regexp.MustCompile("(?s)```yaml\n(# fleet/clusters/prod-eu/fleetwright/kustomization.yaml\n.*?)```").FindStringSubmatch(string(page))
	if overlay == nil {
		t.Fatal("docs/install.md shows no overlay")
	}
	golden.WriteFile(t, filepath.Join(clusterDir, "fleetwright", "kustomization.yaml"), overlay[1]+
		"  # The test's webhook runs on loopback, not as the Deployment.\n"+
		"  - target: {kind: Provider, name: fleetwright}\n    patch: |\n      - op: replace\n        path: /spec/address\n        value: "+j.hook.URL+"/hooks/flux\n")
	j.gitIn(fleetDir, "add", "-A")
	j.gitIn(fleetDir, "commit", "-q", "-m", "flux: lockdown; fleetwright: webhook and notifications")
	j.gitIn(fleetDir, "push", "-q", "origin", "main")

	// Step 1 and 7: platform.yaml with the page's fleet settings, and a
	// first app.
	j.edit("platform.yaml", "  path: fleet\n", "  path: fleet\n  artifacts: {repository: "+j.reg.Host()+"/fleet-artifacts, insecure: true}\n  notifications: {}\n")
	golden.WriteFile(t, filepath.Join(j.apps, "apps", project, app, "app.yaml"),
		"name: hello\ncomponents:\n  - name: web\n    type: workload\n    workload_spec: {image: "+imageRef+", port: 8080}\n")
	j.gitIn(j.apps, "add", "-A")
	j.gitIn(j.apps, "commit", "-q", "-m", "shop: hello")
	j.gitIn(j.apps, "push", "-q", "origin", "main")
	j.must(j.apps, "render", "validate", ".")
	rev := j.mergeFleet(j.renderFleetPR())
	j.bootstrapFlux()
	j.pass(1, "the lockdown, the webhook, its Ingress and the notifications committed as install.md lays them out; the first app rendered")

	j.eventually("Flux applies the install and the app", 4*time.Minute, func() error {
		for _, k := range []string{"fleet-" + clusterName, "project-" + project, project + "-" + app + "-web"} {
			if err := j.kustomizationReady(k, rev); err != nil {
				return err
			}
		}
		return nil
	})
	for _, o := range []client.Object{
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "notification.toolkit.fluxcd.io/v1beta3", "kind": "Provider"}},
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "notification.toolkit.fluxcd.io/v1beta3", "kind": "Alert"}},
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "notification.toolkit.fluxcd.io/v1", "kind": "Receiver"}},
	} {
		name := map[string]string{"Provider": "fleetwright", "Alert": "fleetwright", "Receiver": "fleet"}[o.GetObjectKind().GroupVersionKind().Kind]
		if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: fluxNS, Name: name}, o); err != nil {
			t.Errorf("%s %s: %v", o.GetObjectKind().GroupVersionKind().Kind, name, err)
		}
	}
	alert := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "notification.toolkit.fluxcd.io/v1beta3", "kind": "Alert"}}
	if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: fluxNS, Name: "fleetwright-" + project}, alert); err != nil {
		t.Errorf("the project's Alert, which render writes: %v", err)
	}
	j.pass(2, "Flux applied the root (with the lockdown file), the webhook's objects, the Provider, Alerts and Receiver, the project and the app")

	// The webhook hears of the app through the Alerts alone and follows it
	// to running, reading the cluster as its ServiceAccount.
	j.waitAppPhase(appPath, rev, "running", 3*time.Minute)
	var body string
	j.eventually("the app's page shows its pods", time.Minute, func() error {
		req, err := http.NewRequestWithContext(j.ctx, http.MethodGet, j.hook.URL+"/apps/"+project+"/"+app, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+apiToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		body = string(b)
		if res.StatusCode != http.StatusOK || !strings.Contains(body, app+"-web-") {
			return fmt.Errorf("%s, no pod of %s-web on the page", res.Status, app)
		}
		return nil
	})
	if strings.Contains(strings.ToLower(body), "forbidden") {
		i := strings.Index(strings.ToLower(body), "forbidden")
		t.Errorf("the app's page shows a read the ClusterRole refused: …%s…", body[max(0, i-300):min(len(body), i+200)])
	}
	j.pass(3, "the webhook, as its ServiceAccount, shows "+app+" running and its page its pods, with no read refused")
}

// impersonating writes a copy of kubeconfig whose user acts as user.
func impersonating(t *testing.T, kubeconfig, user string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.AuthInfos {
		a.Impersonate = user
	}
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	golden.WriteFile(t, to, string(b))
}

package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/webhook"
)

// webhookUser is the user the base's ServiceAccount authenticates as.
const webhookUser = "system:serviceaccount:flux-system:fleetwright-webhook"

// applyRBAC creates the base's ServiceAccount, ClusterRole and
// ClusterRoleBinding for real (not a dry run), as kubectl apply -k would,
// and waits until the API server's authorizer has seen the role.
func applyRBAC(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flux-system"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	docs := build(t)
	for _, name := range []string{"ServiceAccount/fleetwright-webhook", "ClusterRole/fleetwright-webhook", "ClusterRoleBinding/fleetwright-webhook"} {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal(docs[name], &u.Object); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := env.Client.Create(ctx, &u); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating %s: %v", name, err)
		}
	}
	// The RBAC authorizer reads roles from a cache: wait for a read the
	// role grants to be allowed.
	kube, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: webhookUser, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:flux-system", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Group: "kustomize.toolkit.fluxcd.io", Resource: "kustomizations"},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook's account may still not list Kustomizations: %+v", r.Status)
		}
	}
}

// asWebhook is the test API server's config as the webhook's
// ServiceAccount sees it: the admin impersonates the account, so every
// read is authorized by the shipped ClusterRole alone.
func asWebhook() *rest.Config {
	c := rest.CopyConfig(env.Config)
	c.Impersonate = rest.ImpersonationConfig{UserName: webhookUser}
	return c
}

// kubelet serves the one kubelet endpoint the API server proxies for a
// pod's logs, over TLS on loopback, and returns its port.
func kubelet(t *testing.T, logs map[string]string) int {
	t.Helper()
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /containerLogs/<namespace>/<pod>/<container>
		log, ok := logs[strings.TrimPrefix(r.URL.Path, "/containerLogs/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, log)
	}))
	t.Cleanup(ts.Close)
	_, port, err := net.SplitHostPort(ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRoleServesEveryPage runs the webhook's status pages, API and checks
// on the test API server as the base's ServiceAccount, with the base's
// ClusterRole as its only grant, and reads every section and API answer:
// an app's Kustomization, Deployment, Ingress, pods, Kubernetes events and
// log tail. Any read the role does not grant shows as "forbidden".
func TestRoleServesEveryPage(t *testing.T) {
	applyRBAC(t)
	ctx := t.Context()
	project := env.Namespace(t)
	const app, comp = "api", "web"
	node := "node-" + project
	pod := app + "-" + comp + "-7d4b9c6f5-x2x9z"
	const logLine = "GET /healthz 200 in 3ms"
	port := kubelet(t, map[string]string{project + "/" + pod + "/" + comp: logLine + "\n"})

	labels := map[string]string{layout.LabelApp: app, layout.LabelProject: project, layout.LabelComponent: comp}
	const rev = "main@sha1:2dc6a1f0c3e94b7d8a5f6e1b2c3d4e5f60718293"
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: project + "-" + app + "-" + comp, Namespace: project, Labels: labels},
		Spec: kustomizev1.KustomizationSpec{
			Interval: metav1.Duration{Duration: 10 * time.Minute}, Timeout: &metav1.Duration{Duration: 5 * time.Minute},
			Path: "./apps/prod/" + project + "/" + app + "/" + comp, Prune: true, Wait: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet"},
		},
	}
	sel := map[string]string{"app.kubernetes.io/instance": app + "-" + comp}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app + "-" + comp, Namespace: project, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: comp, Image: "registry.example.test/api:v1"}}}}},
	}
	podLabels := map[string]string{"app.kubernetes.io/instance": app + "-" + comp}
	for k, v := range labels {
		podLabels[k] = v
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: project, Labels: podLabels},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: comp, Image: "registry.example.test/api:v1"}}},
	}
	prefix := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: app + "-" + comp, Namespace: project, Labels: labels},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "api." + project + ".example.test",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: app + "-" + comp, Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
	}
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: pod + ".scheduled", Namespace: project},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: project, Name: pod},
		Reason:         "Scheduled", Message: "Successfully assigned " + project + "/" + pod + " to " + node, Type: "Normal",
		LastTimestamp: metav1.Now(), Count: 1, Source: corev1.EventSource{Component: "default-scheduler"},
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
	for _, o := range []client.Object{k, d, p, ing, ev, n} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %T: %v", o, err)
		}
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })
	// What a kubelet and the controllers would write.
	n.Status = corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(port)}},
		Conditions:      []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: ptr.To(metav1.Now()),
		ContainerStatuses: []corev1.ContainerStatus{{Name: comp, Ready: true, Image: "registry.example.test/api:v1"}}}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	k.Status = kustomizev1.KustomizationStatus{ObservedGeneration: 1, LastAppliedRevision: rev, LastAttemptedRevision: rev,
		Conditions: []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, ObservedGeneration: 1,
			LastTransitionTime: metav1.Now(), Reason: meta.ReconciliationSucceededReason, Message: "Applied revision: " + rev}}}
	for _, o := range []client.Object{n, p, d, k} {
		if err := env.Client.Status().Update(ctx, o); err != nil {
			t.Fatalf("writing the status of %T: %v", o, err)
		}
	}

	// The pod's use, served through the aggregation layer (the only test
	// of this package's API server that reads metrics.k8s.io).
	ms, stopMetrics, err := env.ServeMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopMetrics() })
	ms.SetPods(project, metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: pod, Labels: podLabels},
		Timestamp: metav1.Now(), Window: metav1.Duration{Duration: 30 * time.Second},
		Containers: []metricsv1beta1.ContainerMetrics{{Name: comp, Usage: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("137m"), corev1.ResourceMemory: resource.MustParse("93Mi")}}}})

	// The webhook, wired as cmd/webhook wires it, reading as its account.
	cfg := asWebhook()
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := metricsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "history.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const hmacKey, token = "hmac-key", "api-token"
	srv, err := webhook.New(webhook.Config{
		Store: st, HMACKey: []byte(hmacKey), APIToken: token,
		Cluster: c, Kube: kube, Metrics: mc, Prober: &probe.Prober{Client: c, RequestTimeout: time.Second},
		Resolver: webhook.NewClusterResolver(c, nil, time.Minute),
		Backoff:  probe.Backoff{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond}, RecheckInterval: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = srv.HTTPServer()
	ts.Start()
	t.Cleanup(func() {
		srv.BeginShutdown()
		ts.Close()
		srv.Stop()
		_ = st.Close()
	})

	// Flux's event about the app's Kustomization.
	body, err := json.Marshal(map[string]any{
		"involvedObject": map[string]any{"kind": "Kustomization", "namespace": project, "name": k.Name,
			"apiVersion": "kustomize.toolkit.fluxcd.io/v1"},
		"severity": "info", "timestamp": time.Now().UTC().Format(time.RFC3339), "reason": "ReconciliationSucceeded",
		"message": "Reconciliation finished in 5.38s, next run in 10m0s", "reportingController": "kustomize-controller",
		"metadata": map[string]string{"revision": rev},
	})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/hooks/flux", bytes.NewReader(body))
	req.Header.Set(webhook.SignatureHeader, webhook.Sign([]byte(hmacKey), body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST /hooks/flux: %s", res.Status)
	}

	get := func(path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, string(b)
	}
	// The checks run as the account too: wait for their verdict.
	appPath := "/apps/" + project + "/" + app
	var status string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, b := get("/api/v1" + appPath + "/deploy-status")
		var ds struct {
			Checks []struct {
				Name, State string
			}
		}
		if code == http.StatusOK && json.Unmarshal([]byte(b), &ds) == nil && len(ds.Checks) >= 2 &&
			ds.Checks[0].State != "" && ds.Checks[0].State != "pending" && ds.Checks[1].State != "" && ds.Checks[1].State != "pending" {
			status = b
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the checks gave no verdict: %d %s", code, b)
		}
	}

	for _, tc := range []struct {
		path  string
		code  int
		wants []string // each must be in the answer
	}{
		{"/api/v1" + appPath + "/deploy-status", http.StatusOK, nil},
		{"/", http.StatusOK, []string{project}},
		{appPath, http.StatusOK, []string{pod, "Successfully assigned", logLine, "<td>137m</td><td>93Mi</td>"}},
		{"/api/v1/apps", http.StatusOK, []string{`"name": "api"`}},
		{"/api/v1" + appPath, http.StatusOK, []string{d.Name}},
		{"/api/v1" + appPath + "/deployments", http.StatusOK, []string{rev}},
		{"/api/v1" + appPath + "/pods", http.StatusOK, []string{pod, `"ready": "1/1"`}},
		{"/api/v1" + appPath + "/events", http.StatusOK, []string{"Successfully assigned", "ReconciliationSucceeded"}},
		{"/api/v1" + appPath + "/logs?component=" + comp, http.StatusOK, []string{logLine}},
	} {
		code, b := get(tc.path)
		if tc.path == "/api/v1"+appPath+"/deploy-status" {
			b = status
		}
		if strings.Contains(strings.ToLower(b), "forbidden") {
			t.Errorf("GET %s: a read the ClusterRole does not grant:\n%s", tc.path, excerpt(b, "forbidden"))
			continue
		}
		if code != tc.code {
			t.Errorf("GET %s: %d, want %d:\n%s", tc.path, code, tc.code, b)
		}
		for _, w := range tc.wants {
			if !strings.Contains(b, w) {
				t.Errorf("GET %s lacks %q:\n%s", tc.path, w, b)
			}
		}
	}
}

// excerpt is the text around the first word in s, for a readable failure.
func excerpt(s, word string) string {
	i := strings.Index(strings.ToLower(s), word)
	return fmt.Sprintf("…%s…", s[max(0, i-300):min(len(s), i+300)])
}

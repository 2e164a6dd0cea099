package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"strings"
	"testing"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/store"
)

func sign384(key, body []byte) string {
	m := hmac.New(sha512.New384, key)
	m.Write(body)
	return "sha384=" + hex.EncodeToString(m.Sum(nil))
}

func sign512(key, body []byte) string {
	m := hmac.New(sha512.New, key)
	m.Write(body)
	return "sha512=" + hex.EncodeToString(m.Sum(nil))
}

func TestIngestSignatures(t *testing.T) {
	t.Parallel()
	body := fixture(t, "kustomization-progressing")
	key := []byte(testKey)
	tests := []struct {
		name string
		sig  string
		want int
	}{
		{"sha256", Sign(key, body), 200},
		{"sha384", sign384(key, body), 200},
		{"sha512", sign512(key, body), 200},
		{"upper-case algorithm", strings.Replace(Sign(key, body), "sha256", "SHA256", 1), 200},
		{"missing", "", 401},
		{"wrong key", Sign([]byte("other"), body), 401},
		{"signature of another body", Sign(key, append([]byte(" "), body...)), 401},
		{"not hex", "sha256=zz", 401},
		{"unknown algorithm", "md5=" + strings.TrimPrefix(Sign(key, body), "sha256="), 401},
		{"no algorithm", strings.TrimPrefix(Sign(key, body), "sha256="), 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, nil)
			code, r := e.postSigned(body, tc.sig)
			if code != tc.want {
				t.Fatalf("status = %d (%+v), want %d", code, r, tc.want)
			}
			evs, err := e.st.Events(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, 10)
			if err != nil {
				t.Fatal(err)
			}
			if stored := len(evs) == 1; stored != (tc.want == 200) {
				t.Errorf("stored events = %d, want stored=%v", len(evs), tc.want == 200)
			}
			if tc.want == 401 && r.Error == "" {
				t.Errorf("401 without a reason")
			}
		})
	}
}

func TestIngestWithoutKeyAcceptsUnsigned(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(c *Config) { c.HMACKey = nil })
	code, r := e.postSigned(fixture(t, "kustomization-progressing"), "")
	if code != 200 || r.Status != "applied" || r.App != "api" || r.Project != "shop" {
		t.Errorf("POST = %d %+v", code, r)
	}
}

func TestIngestRejects(t *testing.T) {
	t.Parallel()
	big := fixture(t, "kustomization-progressing", withMessage(strings.Repeat("x", MaxEventBytes)))
	tests := []struct {
		name    string
		body    []byte
		code    int
		errPart string
	}{
		{"too large", big, 413, "over 1048576 bytes"},
		{"not JSON", []byte(`{"involvedObject":`), 400, "malformed event JSON: unexpected EOF"},
		{"wrong type", []byte(`{"involvedObject":"x"}`), 400, "malformed event JSON: json: cannot unmarshal string"},
		{"trailing data", []byte(`{"involvedObject":{"kind":"Kustomization","name":"a"},"reason":"Progressing"} {}`), 400, "trailing data"},
		{"missing fields", []byte(`{"severity":"info","message":"m"}`), 400, "missing involvedObject.kind, involvedObject.name, reason"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, nil)
			code, r := e.post(tc.body)
			if code != tc.code || !strings.Contains(r.Error, tc.errPart) {
				t.Errorf("POST = %d %q, want %d containing %q", code, r.Error, tc.code, tc.errPart)
			}
			n, err := e.st.Events(t.Context(), layout.AppRef{}, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(n) != 0 {
				t.Errorf("rejected event stored: %+v", n)
			}
		})
	}
}

func TestIngestIgnoredAndDuplicate(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	r := e.mustPost(fixture(t, "gitrepository-newartifact"), 202)
	if r.Status != "ignored" || r.EventID == 0 {
		t.Errorf("ignored answer = %+v", r)
	}
	ign, err := e.st.Events(t.Context(), layout.AppRef{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ign) != 1 || ign[0].Status != store.EventIgnored || ign[0].Kind != "GitRepository" {
		t.Errorf("ignored events = %+v", ign)
	}
	body := fixture(t, "kustomization-progressing")
	first := e.mustPost(body, 200)
	second := e.mustPost(body, 200)
	if first.Status != "applied" || second.Status != "duplicate" {
		t.Errorf("statuses = %q, %q; want applied, duplicate", first.Status, second.Status)
	}
	// Same object, revision and reason but a new message is a new event.
	e.mustPost(fixture(t, "kustomization-progressing", withMessage("Deployment/shop/api-web configured")), 200)
	evs, err := e.st.Events(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 {
		t.Errorf("stored %d events, want 2", len(evs))
	}
	ds, err := e.st.Deployments(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Revision != rev1 || ds[0].SpecRevision != "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432" {
		t.Errorf("deployments = %+v", ds)
	}
}

// TestFluxEventPhases posts real event shapes and checks the phase walk and
// the stored history.
func TestFluxEventPhases(t *testing.T) {
	t.Parallel()
	type step struct {
		fixture string
		wait    store.Phase
	}
	tests := []struct {
		name      string
		steps     []step
		walk      []string
		msgPart   string
		revision  string
		component string
	}{
		{
			name:     "kustomization progressing then succeeded",
			steps:    []step{{"kustomization-progressing", store.PhaseDeploying}, {"kustomization-succeeded", store.PhaseRunning}},
			walk:     []string{"->pending", "pending->deploying", "deploying->running"},
			msgPart:  "sync passed",
			revision: rev1, component: "web",
		},
		{
			name:     "health check failed",
			steps:    []step{{"kustomization-progressing", store.PhaseDeploying}, {"kustomization-healthcheckfailed", store.PhaseFailed}},
			walk:     []string{"->pending", "pending->deploying", "deploying->failed"},
			msgPart:  "HealthCheckFailed: health check failed after 20.012s",
			revision: rev1, component: "web",
		},
		{
			name:     "build failed",
			steps:    []step{{"kustomization-buildfailed", store.PhaseFailed}},
			walk:     []string{"->pending", "pending->failed"},
			msgPart:  "BuildFailed: kustomize build failed",
			revision: rev1, component: "web",
		},
		{
			name:     "helm install succeeded",
			steps:    []step{{"helmrelease-installsucceeded", store.PhaseRunning}},
			walk:     []string{"->pending", "pending->deploying", "deploying->running"},
			msgPart:  "sync passed",
			revision: "13.4.4", component: "db",
		},
		{
			name:     "helm upgrade failed during a rollout",
			steps:    []step{{"kustomization-progressing", store.PhaseDeploying}, {"helmrelease-upgradefailed", store.PhaseFailed}},
			walk:     []string{"->pending", "pending->deploying", "deploying->failed"},
			msgPart:  "UpgradeFailed: Helm upgrade failed",
			revision: rev1, component: "db",
		},
		{
			name:     "helm upgrade failed after the rollout degrades the app",
			steps:    []step{{"kustomization-succeeded", store.PhaseRunning}, {"helmrelease-upgradefailed", store.PhaseDegraded}},
			walk:     []string{"->pending", "pending->deploying", "deploying->running", "running->degraded"},
			msgPart:  "UpgradeFailed",
			revision: rev1, component: "db",
		},
		{
			name: "degraded app recovers",
			steps: []step{
				{"kustomization-succeeded", store.PhaseRunning},
				{"helmrelease-upgradefailed", store.PhaseDegraded},
				{"helmrelease-upgradesucceeded", store.PhaseRunning},
			},
			walk:     []string{"->pending", "pending->deploying", "deploying->running", "running->degraded", "degraded->running"},
			msgPart:  "sync passed",
			revision: rev1, component: "db",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, nil)
			var a store.App
			for _, s := range tc.steps {
				e.mustPost(fixture(t, s.fixture), 200)
				a = e.waitPhase("shop", "api", s.wait)
			}
			if diff := cmp.Diff(tc.walk, e.walk("shop", "api")); diff != "" {
				t.Errorf("phase walk (-want +got):\n%s", diff)
			}
			if !strings.Contains(a.Message, tc.msgPart) {
				t.Errorf("app message = %q, want it to contain %q", a.Message, tc.msgPart)
			}
			ds, err := e.st.Deployments(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, 10, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != 1 {
				t.Fatalf("deployments = %d, want 1", len(ds))
			}
			d := ds[0]
			if d.Revision != tc.revision || d.Phase != a.Phase || d.SpecRevision == "" {
				t.Errorf("deployment = %+v", d)
			}
			if d.Phase.Final() && d.FinishedAt.IsZero() {
				t.Errorf("final deployment without an end time: %+v", d)
			}
			found := false
			for _, c := range d.Components {
				found = found || c.Name == tc.component
			}
			if !found {
				t.Errorf("components %+v lack %q", d.Components, tc.component)
			}
		})
	}
}

func TestNewRevisionSupersedes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	const rev2 = "main@sha1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	e.mustPost(fixture(t, "kustomization-progressing"), 200)
	e.waitPhase("shop", "api", store.PhaseDeploying)
	r := e.mustPost(fixture(t, "kustomization-progressing", withRevision(rev2)), 200)
	e.mustPost(fixture(t, "kustomization-succeeded", withRevision(rev2)), 200)
	a := e.waitPhase("shop", "api", store.PhaseRunning)
	if a.Revision != rev2 || a.DeploymentID != r.DeploymentID {
		t.Errorf("app = %+v, want revision %s", a, rev2)
	}
	ds, err := e.st.Deployments(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[1].Revision != rev1 || !strings.Contains(ds[1].Message, "superseded by revision "+rev2) || ds[1].FinishedAt.IsZero() {
		t.Errorf("old deployment = %+v", ds[1])
	}
}

func TestMetadataWithoutPrefix(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	body := fixture(t, "kustomization-progressing", func(ev *eventv1.Event) {
		ev.Metadata = map[string]string{"revision": rev1, "app": "cart", "project": "shop", "component": "api"}
		ev.InvolvedObject.Name = "shop-cart-api"
	})
	r := e.mustPost(body, 200)
	if r.App != "cart" || r.Project != "shop" {
		t.Errorf("answer = %+v", r)
	}
}

type staticResolver map[string]Owner

func (s staticResolver) Resolve(_ context.Context, kind, ns, name string) (Owner, bool, error) {
	r, ok := s[kind+"/"+ns+"/"+name]
	return r, ok, nil
}

func TestResolverMapsEventsWithoutMetadata(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(c *Config) {
		c.Resolver = staticResolver{"Kustomization/flux-system/shop-api-web": {App: layout.AppRef{Project: "shop", Name: "api"}, Component: "web", SpecRevision: "s1"}}
	})
	strip := func(ev *eventv1.Event) { ev.Metadata = map[string]string{"revision": rev1} }
	r := e.mustPost(fixture(t, "kustomization-progressing", strip), 200)
	if r.App != "api" || r.DeploymentID == 0 {
		t.Errorf("answer = %+v", r)
	}
	other := fixture(t, "kustomization-progressing", strip, func(ev *eventv1.Event) { ev.InvolvedObject.Name = "infra" })
	if r := e.mustPost(other, 202); r.Status != "ignored" {
		t.Errorf("unknown object answer = %+v", r)
	}
}

func TestSignMatchesVerify(t *testing.T) {
	t.Parallel()
	body := []byte(`{"a":1}`)
	if err := verifySignature([]byte("k"), body, Sign([]byte("k"), body)); err != nil {
		t.Fatal(err)
	}
	if err := verifySignature([]byte("k"), bytes.ToUpper(body), Sign([]byte("k"), body)); err == nil {
		t.Fatal("a changed body verified")
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, name := range []string{"kustomization-progressing", "helmrelease-upgradefailed", "gitrepository-newartifact"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"involvedObject":{"kind":"K","name":"n"},"reason":"r","metadata":{"revision":"x"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := decodeEvent(body)
		if err != nil {
			return
		}
		if ev.InvolvedObject.Kind == "" || ev.InvolvedObject.Name == "" || ev.Reason == "" {
			t.Fatalf("accepted an event without its required fields: %+v", ev)
		}
		_ = dedupeKey(&ev, revisionOf(&ev), metaValue(&ev, metaEnvironment))
		_, _ = health(&ev)
	})
}

func FuzzVerifySignature(f *testing.F) {
	f.Add([]byte("k"), []byte("body"), "sha256=00")
	f.Add([]byte("k"), []byte("body"), Sign([]byte("k"), []byte("body")))
	f.Fuzz(func(t *testing.T, key, body []byte, header string) {
		if verifySignature(key, body, header) != nil {
			return
		}
		// Only a correct HMAC under a supported algorithm verifies.
		for _, want := range []string{Sign(key, body), sign384(key, body), sign512(key, body)} {
			if strings.EqualFold(header, want) {
				return
			}
		}
		t.Fatalf("header %q verified", header)
	})
}

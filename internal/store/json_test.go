package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// TestJSONShape pins the JSON of the types the webhook writes as they are
// (its API and its stream of phase changes): the keys, their order, and
// that each decodes back to what was written.
func TestJSONShape(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		v    any
		back func([]byte) (any, error)
		want string
	}{
		{
			v: App{AppRef: layout.AppRef{Project: "shop", Name: "api"}, Environment: "staging", Phase: PhaseRunning, Message: "m", DeploymentID: 3,
				Revision: "main@sha1:abc", SpecRevision: "0123", LiveURL: "https://x/", UpdatedAt: at},
			back: decode[App],
			want: `{"project":"shop","name":"api","environment":"staging","phase":"running","message":"m","deployment_id":3,` +
				`"revision":"main@sha1:abc","spec_revision":"0123","live_url":"https://x/","updated_at":"2025-03-01T12:00:00Z"}`,
		},
		{
			v:    App{AppRef: layout.AppRef{Project: "p", Name: "a"}},
			back: decode[App],
			want: `{"project":"p","name":"a","phase":"","deployment_id":0,"revision":"","updated_at":"0001-01-01T00:00:00Z"}`,
		},
		{
			v: Deployment{ID: 7, App: layout.AppRef{Project: "shop", Name: "api"}, Environment: "staging", Revision: "main@sha1:abc", SpecRevision: "0123",
				StartedAt: at, FinishedAt: at.Add(time.Minute), UpdatedAt: at.Add(2 * time.Minute), Phase: PhaseFailed, Message: "m",
				Components: []ComponentState{{Name: "web", Kind: "Kustomization", Health: HealthFailed, Reason: "r", Message: "m", Terminal: true, UpdatedAt: at}},
				Checks:     json.RawMessage(`{"checks":[]}`), LiveURL: "https://x/"},
			back: decode[Deployment],
			want: `{"id":7,"project":"shop","app":"api","environment":"staging","revision":"main@sha1:abc","spec_revision":"0123",` +
				`"started_at":"2025-03-01T12:00:00Z","finished_at":"2025-03-01T12:01:00Z","updated_at":"2025-03-01T12:02:00Z","phase":"failed","message":"m",` +
				`"components":[{"name":"web","kind":"Kustomization","health":"failed","reason":"r","message":"m","terminal":true,"updated_at":"2025-03-01T12:00:00Z"}],` +
				`"checks":{"checks":[]},"live_url":"https://x/"}`,
		},
		{
			v:    Deployment{ID: 1, App: layout.AppRef{Project: "p", Name: "a"}},
			back: decode[Deployment],
			want: `{"id":1,"project":"p","app":"a","revision":"","started_at":"0001-01-01T00:00:00Z","updated_at":"0001-01-01T00:00:00Z","phase":"","components":null}`,
		},
		{
			v: PhaseChange{Seq: 9, App: layout.AppRef{Project: "shop", Name: "api"}, Environment: "staging", DeploymentID: 7, Revision: "main@sha1:abc",
				From: PhaseDeploying, To: PhaseRunning, Message: "m", At: at},
			back: decode[PhaseChange],
			want: `{"seq":9,"project":"shop","app":"api","environment":"staging","deployment_id":7,"revision":"main@sha1:abc",` +
				`"from":"deploying","to":"running","message":"m","at":"2025-03-01T12:00:00Z"}`,
		},
		{
			v:    PhaseChange{Seq: 1, App: layout.AppRef{Project: "p", Name: "a"}, To: PhasePending},
			back: decode[PhaseChange],
			want: `{"seq":1,"project":"p","app":"a","deployment_id":0,"revision":"","to":"pending","at":"0001-01-01T00:00:00Z"}`,
		},
		{
			v: Event{ID: 5, ReceivedAt: at, EventTime: at, Kind: "Kustomization", Namespace: "shop", Name: "shop-api-web", Severity: "info",
				Reason: "r", Message: "m", Revision: "main@sha1:abc", Controller: "kustomize-controller", App: layout.AppRef{Project: "shop", Name: "api"},
				Component: "web", SpecRevision: "0123", Environment: "staging", Status: EventApplied, DeploymentID: 7},
			back: decode[Event],
			want: `{"id":5,"received_at":"2025-03-01T12:00:00Z","timestamp":"2025-03-01T12:00:00Z","kind":"Kustomization","namespace":"shop",` +
				`"name":"shop-api-web","severity":"info","reason":"r","message":"m","revision":"main@sha1:abc","controller":"kustomize-controller",` +
				`"project":"shop","app":"api","component":"web","spec_revision":"0123","environment":"staging","status":"applied","deployment_id":7}`,
		},
		{
			v:    Event{ID: 6, ReceivedAt: at, EventTime: at, Status: EventIgnored, IgnoredReason: "no app"},
			back: decode[Event],
			want: `{"id":6,"received_at":"2025-03-01T12:00:00Z","timestamp":"2025-03-01T12:00:00Z","kind":"","namespace":"","name":"",` +
				`"severity":"","reason":"","message":"","status":"ignored","ignored_reason":"no app"}`,
		},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%T as JSON:\n got %s\nwant %s", tc.v, b, tc.want)
		}
		got, err := tc.back(b)
		if err != nil {
			t.Fatalf("%T: %v", tc.v, err)
		}
		if diff := cmp.Diff(tc.v, got); diff != "" {
			t.Errorf("%T does not decode back (-wrote +read):\n%s", tc.v, diff)
		}
	}
}

func decode[T any](b []byte) (any, error) {
	var v T
	err := json.Unmarshal(b, &v)
	return v, err
}

package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/lifecycle"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

func TestHistoryWriteText(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	h := &lifecycle.History{
		App: "shop/api", Paths: []string{"apps/shop/api", "templates/web"},
		Revisions: []lifecycle.Revision{
			{Commit: "0123456789abcdef0123", Date: at, Author: "Ann", Subject: "scale the api", Deployments: []int64{3, 2}},
			{Commit: "fedcba9876543210fedc", Date: at.Add(-time.Hour), Author: "Bo", Subject: "add the api"},
		},
		Deployments: []api.Deployment{
			{ID: 3, StartedAt: at, FinishedAt: at.Add(time.Minute), Phase: "running",
				SpecRevision: "0123456789abcdef0123", Revision: "main@sha1:aaaaaaaaaaaabbbbbbbb", Message: "rolled out\nall ready"},
			{ID: 2, StartedAt: at.Add(-time.Hour), Phase: "deploying",
				Revision: "main@sha1:cccc", Message: strings.Repeat("m", 90)},
		},
	}
	for _, tc := range []struct {
		name            string
		h               *lifecycle.History
		withDeployments bool
		want            string
	}{
		{"revisions only", h, false, `shop/api (apps/shop/api, templates/web)

REVISIONS
COMMIT        DATE               AUTHOR  DEPLOYED  MESSAGE
0123456789ab  2026-03-01 09:30Z  Ann               scale the api
fedcba987654  2026-03-01 08:30Z  Bo                add the api
`},
		{"with deployments", h, true, `shop/api (apps/shop/api, templates/web)

REVISIONS
COMMIT        DATE               AUTHOR  DEPLOYED  MESSAGE
0123456789ab  2026-03-01 09:30Z  Ann     3,2       scale the api
fedcba987654  2026-03-01 08:30Z  Bo      -         add the api

DEPLOYMENTS
ID  STARTED            FINISHED           PHASE      SPEC          FLEET                   MESSAGE
3   2026-03-01 09:30Z  2026-03-01 09:31Z  running    0123456789ab  main@sha1:aaaaaaaaaaaa  rolled out
2   2026-03-01 08:30Z  -                  deploying  -             main@sha1:cccc          ` + strings.Repeat("m", 80) + `…
`},
		{"nothing", &lifecycle.History{App: "shop/web", Paths: []string{"apps/shop/web"}}, true, `shop/web (apps/shop/web)

REVISIONS
COMMIT  DATE  AUTHOR  DEPLOYED  MESSAGE
(none: the spec is not committed)

DEPLOYMENTS
ID  STARTED  FINISHED  PHASE  SPEC  FLEET  MESSAGE
(none recorded)
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			if err := tc.h.WriteText(&b, tc.withDeployments); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("WriteText (-want +got):\n%s", diff)
			}
		})
	}
}

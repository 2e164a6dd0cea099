package githubtest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/github/githubtest"
)

// recorder is a testing.TB that records failures instead of failing, and
// runs cleanups on demand.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}
func (r *recorder) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

func do(t *testing.T, method, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestStrictness(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		opts       []githubtest.Option
		setup      func(*githubtest.Server)
		method     string
		path       string
		body       string
		header     map[string]string
		wantStatus int
		wantErrors []string
	}{
		{
			name:       "unexpected request",
			method:     "GET",
			path:       "repos/acme/fleet/pulls",
			wantStatus: http.StatusInternalServerError,
			wantErrors: []string{"githubtest: unexpected request GET /repos/acme/fleet/pulls"},
		},
		{
			name:       "expected call not made",
			setup:      func(s *githubtest.Server) { s.Expect("DELETE", "/repos/acme/fleet/issues/comments/1") },
			wantErrors: []string{"githubtest: expected DELETE /repos/acme/fleet/issues/comments/1 1 time(s), got 0"},
		},
		{
			name: "query mismatch",
			setup: func(s *githubtest.Server) {
				s.Expect("GET", "/repos/acme/fleet/pulls").Query("state", "open").Respond(200, []any{})
			},
			method:     "GET",
			path:       "repos/acme/fleet/pulls?state=closed",
			wantStatus: http.StatusInternalServerError,
			wantErrors: []string{
				"githubtest: unexpected request GET /repos/acme/fleet/pulls?state=closed",
				"githubtest: expected GET /repos/acme/fleet/pulls?state=open 1 time(s), got 0",
			},
		},
		{
			name:       "missing token",
			opts:       []githubtest.Option{githubtest.WithToken("t0k")},
			setup:      func(s *githubtest.Server) { s.Expect("GET", "/repos/acme/fleet/pulls") },
			method:     "GET",
			path:       "repos/acme/fleet/pulls",
			wantStatus: http.StatusUnauthorized,
			wantErrors: []string{"githubtest: GET /repos/acme/fleet/pulls sent without the expected token"},
		},
		{
			name:       "unknown body field",
			setup:      func(s *githubtest.Server) { s.Expect("POST", "/repos/acme/fleet/pulls") },
			method:     "POST",
			path:       "repos/acme/fleet/pulls",
			body:       `{"title":"t","head":"h","base":"main","labels":["x"]}`,
			wantStatus: http.StatusUnprocessableEntity,
			wantErrors: []string{`githubtest: POST /repos/acme/fleet/pulls: field "labels" is not a parameter of this endpoint`},
		},
		{
			name: "body check fails",
			setup: func(s *githubtest.Server) {
				s.Expect("POST", "/repos/acme/fleet/pulls").JSONField("title", "right")
			},
			method:     "POST",
			path:       "repos/acme/fleet/pulls",
			body:       `{"title":"wrong","head":"h","base":"main"}`,
			wantStatus: http.StatusCreated,
			wantErrors: []string{`githubtest: POST /repos/acme/fleet/pulls: field "title" = "wrong", want "right"`},
		},
		{
			name: "whole body differs",
			setup: func(s *githubtest.Server) {
				s.Expect("POST", "/repos/acme/fleet/pulls").JSONBody(map[string]any{"title": "T", "head": "h", "base": "main"})
			},
			method:     "POST",
			path:       "repos/acme/fleet/pulls",
			body:       `{"title":"t","head":"h","base":"main","body":"extra"}`,
			wantStatus: http.StatusCreated,
			wantErrors: []string{`githubtest: POST /repos/acme/fleet/pulls: field "body" = "extra" not expected; field "title" = "t", want "T"`},
		},
		{
			name: "whole body matches",
			setup: func(s *githubtest.Server) {
				s.Expect("POST", "/repos/acme/fleet/pulls").JSONBody(map[string]any{"title": "t", "head": "h", "base": "main"})
			},
			method:     "POST",
			path:       "repos/acme/fleet/pulls",
			body:       `{"title":"t","head":"h","base":"main"}`,
			wantStatus: http.StatusCreated,
		},
		{
			name:       "expected and well-formed",
			opts:       []githubtest.Option{githubtest.WithToken("t0k")},
			setup:      func(s *githubtest.Server) { s.Expect("POST", "/repos/acme/fleet/pulls").JSONField("head", "h") },
			method:     "POST",
			path:       "repos/acme/fleet/pulls",
			body:       `{"title":"t","head":"h","base":"main"}`,
			header:     map[string]string{"Authorization": "Bearer t0k"},
			wantStatus: http.StatusCreated,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{TB: t}
			srv := githubtest.New(rec, tc.opts...)
			if tc.setup != nil {
				tc.setup(srv)
			}
			if tc.method != "" {
				resp, _ := do(t, tc.method, srv.URL+tc.path, tc.body, tc.header)
				if resp.StatusCode != tc.wantStatus {
					t.Errorf("status = %d, want %d", resp.StatusCode, tc.wantStatus)
				}
			}
			rec.runCleanups()
			if diff := cmp.Diff(tc.wantErrors, rec.failures()); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPaginationAndShapes(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	pr := srv.AddPullRequest("acme/apps", githubtest.PullRequest{Head: "feature", Base: "main", Title: "t"})
	for i := range 5 {
		srv.AddComment("acme/apps", pr, "dev", fmt.Sprintf("c%d", i))
	}
	srv.Expect("GET", "/repos/acme/apps/issues/1/comments").Times(3)
	srv.Expect("GET", "/repos/acme/apps/pulls/1")

	tests := []struct {
		query    string
		wantIDs  []string
		wantRels []string
	}{
		{"per_page=2", []string{"c0", "c1"}, []string{"next", "last"}},
		{"per_page=2&page=2", []string{"c2", "c3"}, []string{"next", "last", "first", "prev"}},
		{"per_page=2&page=3", []string{"c4"}, []string{"first", "prev"}},
	}
	for _, tc := range tests {
		resp, body := do(t, "GET", srv.URL+"repos/acme/apps/issues/1/comments?"+tc.query, "", nil)
		var got []map[string]any
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		var bodies []string
		for _, c := range got {
			bodies = append(bodies, c["body"].(string))
			for _, k := range []string{"id", "node_id", "url", "html_url", "issue_url", "user", "created_at", "updated_at", "author_association"} {
				if _, ok := c[k]; !ok {
					t.Errorf("comment lacks %q", k)
				}
			}
		}
		if diff := cmp.Diff(tc.wantIDs, bodies); diff != "" {
			t.Errorf("%s: bodies (-want +got):\n%s", tc.query, diff)
		}
		var rels []string
		for _, part := range strings.Split(resp.Header.Get("Link"), ", ") {
			if _, rel, ok := strings.Cut(part, `rel="`); ok {
				rels = append(rels, strings.TrimSuffix(rel, `"`))
			}
			if !strings.HasPrefix(part, "<"+srv.URL+"repos/acme/apps/issues/1/comments?") {
				t.Errorf("%s: link %q does not point at the same list", tc.query, part)
			}
		}
		if diff := cmp.Diff(tc.wantRels, rels); diff != "" {
			t.Errorf("%s: Link rels (-want +got):\n%s", tc.query, diff)
		}
	}

	_, body := do(t, "GET", srv.URL+"repos/acme/apps/pulls/1", "", nil)
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	head := got["head"].(map[string]any)
	if head["label"] != "acme:feature" || head["ref"] != "feature" || len(head["sha"].(string)) != 40 || got["state"] != "open" {
		t.Errorf("pull request JSON = %s", body)
	}
	if w := srv.Writes(); len(w) != 0 {
		t.Errorf("writes = %v", w)
	}
}

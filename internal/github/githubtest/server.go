package githubtest

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Body   []byte
}

// IsWrite reports whether the request changes state (anything but GET and
// HEAD).
func (r Request) IsWrite() bool { return r.Method != http.MethodGet && r.Method != http.MethodHead }

func (r Request) String() string {
	if len(r.Query) == 0 {
		return r.Method + " " + r.Path
	}
	return r.Method + " " + r.Path + "?" + r.Query.Encode()
}

// Expectation is a call the test expects. Configure it with its methods
// right after Server.Expect, before the code under test runs.
type Expectation struct {
	method, path string
	times        int // at most
	least        int // at least
	query        url.Values
	checks       []func(body map[string]any) error
	status       int
	response     any
	made         int
}

// Times sets how often the call must be made (default once).
func (e *Expectation) Times(n int) *Expectation { e.times, e.least = n, n; return e }

// Between allows the call from least to most times, for calls whose number
// depends on timing (a server reporting states as they happen). A call
// beyond most is unexpected, one short of least fails the test at cleanup.
func (e *Expectation) Between(least, most int) *Expectation {
	e.least, e.times = least, most
	return e
}

// Query requires the query parameter key to have value.
func (e *Expectation) Query(key, value string) *Expectation {
	e.query.Set(key, value)
	return e
}

// Body adds a check of the JSON request body; an error fails the test.
func (e *Expectation) Body(check func(body map[string]any) error) *Expectation {
	e.checks = append(e.checks, check)
	return e
}

// JSONField requires the JSON request body's field key to equal want (as
// encoding/json decodes it: strings, float64, bool, nil).
func (e *Expectation) JSONField(key string, want any) *Expectation {
	return e.Body(func(body map[string]any) error {
		got, ok := body[key]
		if !ok {
			return fmt.Errorf("field %q missing", key)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("field %q = %q, want %q", key, fmt.Sprint(got), fmt.Sprint(want))
		}
		return nil
	})
}

// JSONBody requires the JSON request body to be exactly want: the same
// fields with the same values (as encoding/json decodes them: strings,
// float64, bool, nil, []any, map[string]any).
func (e *Expectation) JSONBody(want map[string]any) *Expectation {
	return e.Body(func(body map[string]any) error {
		var diffs []string
		keys := slices.Sorted(maps.Keys(want))
		for k := range body {
			if _, ok := want[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			w, inWant := want[k]
			g, inBody := body[k]
			switch {
			case !inBody:
				diffs = append(diffs, fmt.Sprintf("field %q missing", k))
			case !inWant:
				diffs = append(diffs, fmt.Sprintf("field %q = %s not expected", k, jsonText(g)))
			case !reflect.DeepEqual(w, g):
				diffs = append(diffs, fmt.Sprintf("field %q = %s, want %s", k, jsonText(g), jsonText(w)))
			}
		}
		if len(diffs) > 0 {
			return errors.New(strings.Join(diffs, "; "))
		}
		return nil
	})
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Respond makes the server answer the call with status and body (encoded
// as JSON) instead of the fake's own answer, for example to simulate an
// error.
func (e *Expectation) Respond(status int, body any) *Expectation {
	e.status, e.response = status, body
	return e
}

func (e *Expectation) String() string {
	s := e.method + " " + e.path
	if len(e.query) > 0 {
		s += "?" + e.query.Encode()
	}
	return s
}

func (e *Expectation) matches(method, path string, q url.Values) bool {
	if e.method != method || !pathMatches(e.path, path) || e.made >= e.times {
		return false
	}
	for k := range e.query {
		if q.Get(k) != e.query.Get(k) {
			return false
		}
	}
	return true
}

// PullRequest is a pull request held by the server.
type PullRequest struct {
	Number int
	// Head is "owner:branch" or a branch of the repository itself.
	Head  string
	Base  string
	Title string
	Body  string
	// State is "open" (the default when seeding) or "closed".
	State string
	// User is the author's login; the server's user when empty.
	User      string
	CreatedAt time.Time
	UpdatedAt time.Time
	// MergedAt is set when the pull request was merged (MergePullRequest).
	MergedAt time.Time
}

// Comment is an issue or pull request comment held by the server.
type Comment struct {
	ID        int64
	Issue     int
	Body      string
	User      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

type repoState struct {
	owner, name string
	id          int64
	nextNumber  int
	pulls       []*PullRequest
	comments    []*Comment
	deployments []*Deployment
}

// Server is the fake API server.
type Server struct {
	// URL is the base URL to configure the client with.
	URL string

	t      testing.TB
	token  string
	user   string
	mu     sync.Mutex
	now    time.Time
	nextID int64

	expects  []*Expectation
	requests []Request
	repos    map[string]*repoState
}

// Option configures a Server.
type Option func(*Server)

// WithToken makes the server require "Authorization: Bearer token" (or
// "token token") on every request; others fail the test and get 401.
func WithToken(token string) Option { return func(s *Server) { s.token = token } }

// WithUser sets the login of the authenticated user, who authors the pull
// requests and comments the client creates (default "fleetwright[bot]").
func WithUser(login string) Option { return func(s *Server) { s.user = login } }

// WithStartTime sets the time of the first write; each write advances the
// server's clock by one second (default 2026-01-01T00:00:00Z).
func WithStartTime(t time.Time) Option { return func(s *Server) { s.now = t.UTC() } }

// New starts a fake API server for the duration of the test.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		t:      t,
		user:   "fleetwright[bot]",
		now:    time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		nextID: 1_000_001,
		repos:  map[string]*repoState{},
	}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls", s.listPulls)
	mux.HandleFunc("POST /repos/{owner}/{repo}/pulls", s.createPull)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{number}", s.getPull)
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/pulls/{number}", s.editPull)
	// GET .../issues/{number}/comments and GET .../issues/comments/{id}
	// overlap as patterns; one handler tells them apart.
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{a}/{b}", func(w http.ResponseWriter, r *http.Request) {
		switch a, b := r.PathValue("a"), r.PathValue("b"); {
		case b == "comments":
			r.SetPathValue("number", a)
			s.listComments(w, r)
		case a == "comments":
			r.SetPathValue("id", b)
			s.getComment(w, r)
		default:
			writeJSON(w, http.StatusNotFound, notFound())
		}
	})
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/comments", s.createComment)
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", s.editComment)
	mux.HandleFunc("DELETE /repos/{owner}/{repo}/issues/comments/{id}", s.deleteComment)
	mux.HandleFunc("POST /repos/{owner}/{repo}/deployments", s.createDeployment)
	mux.HandleFunc("POST /repos/{owner}/{repo}/deployments/{id}/statuses", s.createDeploymentStatus)
	mux.HandleFunc("GET /repos/{owner}/{repo}/deployments", s.listDeployments)
	mux.HandleFunc("GET /repos/{owner}/{repo}/deployments/{id}/statuses", s.listDeploymentStatuses)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, mux)
	}))
	// Cleanups run last-in first-out: stop serving, then check.
	t.Cleanup(s.checkExpectations)
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/"
	return s
}

// pathMatches reports whether path matches pattern, where a pattern
// segment "*" stands for any one non-empty segment.
func pathMatches(pattern, path string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == path
	}
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if ps[i] != xs[i] && (ps[i] != "*" || xs[i] == "") {
			return false
		}
	}
	return true
}

// Expect tells the server to expect a call of method on path (without the
// query string), once unless Times or Between says otherwise. A path
// segment "*" matches any one segment, for paths holding an ID the server
// hands out (a deployment's statuses: "/repos/o/r/deployments/*/statuses").
func (s *Server) Expect(method, path string) *Expectation {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := &Expectation{method: method, path: path, times: 1, least: 1, query: url.Values{}}
	s.expects = append(s.expects, e)
	return e
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Writes returns the requests received so far that change state.
func (s *Server) Writes() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.IsWrite() {
			out = append(out, r)
		}
	}
	return out
}

// AddPullRequest seeds a pull request in repo ("owner/name") and returns
// its number.
func (s *Server) AddPullRequest(repo string, pr PullRequest) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.repo(repo)
	rs.nextNumber++
	pr.Number = rs.nextNumber
	if pr.State == "" {
		pr.State = "open"
	}
	if pr.User == "" {
		pr.User = "someone"
	}
	if !strings.Contains(pr.Head, ":") {
		pr.Head = rs.owner + ":" + pr.Head
	}
	pr.CreatedAt = s.tick()
	pr.UpdatedAt = pr.CreatedAt
	rs.pulls = append(rs.pulls, &pr)
	return pr.Number
}

// AddComment seeds a comment by user on issue or pull request number of
// repo and returns its ID.
func (s *Server) AddComment(repo string, number int, user, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.repo(repo)
	c := &Comment{ID: s.id(), Issue: number, Body: body, User: user, CreatedAt: s.tick()}
	c.UpdatedAt = c.CreatedAt
	rs.comments = append(rs.comments, c)
	return c.ID
}

// MergePullRequest marks pull request number of repo merged and closed, as
// GitHub does when someone merges it (the Git side of the merge is the
// test's to do). It reports whether the pull request exists and was open.
func (s *Server) MergePullRequest(repo string, number int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.repo(repo).pulls {
		if p.Number == number && p.State == "open" {
			p.State = "closed"
			p.UpdatedAt = s.tick()
			p.MergedAt = p.UpdatedAt
			return true
		}
	}
	return false
}

// PullRequests returns the pull requests of repo, by number.
func (s *Server) PullRequests(repo string) []PullRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PullRequest
	for _, p := range s.repo(repo).pulls {
		out = append(out, *p)
	}
	return out
}

// Comments returns the comments on issue or pull request number of repo,
// oldest first.
func (s *Server) Comments(repo string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.repo(repo).comments {
		if c.Issue == number {
			out = append(out, *c)
		}
	}
	return out
}

func (s *Server) repo(full string) *repoState {
	rs, ok := s.repos[full]
	if !ok {
		owner, name, _ := strings.Cut(full, "/")
		rs = &repoState{owner: owner, name: name, id: int64(100 + len(s.repos))}
		s.repos[full] = rs
	}
	return rs
}

func (s *Server) tick() time.Time {
	t := s.now
	s.now = s.now.Add(time.Second)
	return t
}

func (s *Server) id() int64 {
	s.nextID++
	return s.nextID - 1
}

func (s *Server) checkExpectations() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.expects {
		switch {
		case e.made >= e.least:
		case e.least == e.times:
			s.t.Errorf("githubtest: expected %s %d time(s), got %d", e, e.times, e.made)
		default:
			s.t.Errorf("githubtest: expected %s %d to %d time(s), got %d", e, e.least, e.times, e.made)
		}
	}
}

// serve records the request, checks it against the expectations and the
// token, and hands it to the fake's handlers.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, mux *http.ServeMux) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("githubtest: reading %s %s: %v", r.Method, r.URL.Path, err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: body}

	s.mu.Lock()
	s.requests = append(s.requests, req)
	var exp *Expectation
	for _, e := range s.expects {
		if e.matches(r.Method, r.URL.Path, req.Query) {
			exp = e
			e.made++
			break
		}
	}
	s.mu.Unlock()

	if exp == nil {
		s.t.Errorf("githubtest: unexpected request %s", req)
		writeJSON(w, http.StatusInternalServerError, apiError("unexpected request: "+req.String()))
		return
	}
	if s.token != "" {
		auth := r.Header.Get("Authorization")
		if auth != "Bearer "+s.token && auth != "token "+s.token {
			s.t.Errorf("githubtest: %s sent without the expected token", req)
			writeJSON(w, http.StatusUnauthorized, apiError("Bad credentials"))
			return
		}
	}
	if len(body) > 0 || req.IsWrite() {
		if ct := r.Header.Get("Content-Type"); len(body) > 0 && !strings.HasPrefix(ct, "application/json") {
			s.t.Errorf("githubtest: %s has Content-Type %q, want application/json", req, ct)
		}
		var fields map[string]any
		if len(body) > 0 {
			if err := json.Unmarshal(body, &fields); err != nil {
				s.t.Errorf("githubtest: %s: body is not a JSON object: %v", req, err)
				writeJSON(w, http.StatusBadRequest, apiError("Problems parsing JSON"))
				return
			}
		}
		for _, check := range exp.checks {
			if err := check(fields); err != nil {
				s.t.Errorf("githubtest: %s: %v", req, err)
			}
		}
	}
	if exp.status != 0 {
		writeJSON(w, exp.status, exp.response)
		return
	}
	mux.ServeHTTP(w, r)
}

// --- handlers ---

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.repo(r.PathValue("owner") + "/" + r.PathValue("repo"))
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	if state != "open" && state != "closed" && state != "all" {
		s.validationFailed(w, r, "state", "invalid")
		return
	}
	var match []*PullRequest
	for _, p := range rs.pulls {
		if (state == "all" || p.State == state) &&
			(q.Get("head") == "" || q.Get("head") == p.Head) &&
			(q.Get("base") == "" || q.Get("base") == p.Base) {
			match = append(match, p)
		}
	}
	// GitHub's default order: newest first.
	slices.Reverse(match)
	writePage(s, w, r, match, func(p *PullRequest) any { return s.pullJSON(rs, p) })
}

func (s *Server) createPull(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.repo(r.PathValue("owner") + "/" + r.PathValue("repo"))
	var in struct {
		Title, Head, Base, Body *string
	}
	if !s.decode(w, r, &in, "title", "head", "head_repo", "base", "body", "maintainer_can_modify", "draft", "issue") {
		return
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"title", in.Title}, {"head", in.Head}, {"base", in.Base}} {
		if f.v == nil || *f.v == "" {
			s.validationFailed(w, r, f.name, "missing_field")
			return
		}
	}
	head := *in.Head
	if !strings.Contains(head, ":") {
		head = rs.owner + ":" + head
	}
	for _, p := range rs.pulls {
		if p.State == "open" && p.Head == head && p.Base == *in.Base {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
				"message": "Validation Failed",
				"errors": []any{map[string]any{
					"resource": "PullRequest", "code": "custom",
					"message": "A pull request already exists for " + head + ".",
				}},
				"documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
				"status":            "422",
			})
			return
		}
	}
	rs.nextNumber++
	p := &PullRequest{
		Number: rs.nextNumber, Head: head, Base: *in.Base, Title: *in.Title,
		State: "open", User: s.user, CreatedAt: s.tick(),
	}
	if in.Body != nil {
		p.Body = *in.Body
	}
	if utf8.RuneCountInString(p.Body) > 65536 {
		s.validationFailed(w, r, "body", "too_long")
		return
	}
	p.UpdatedAt = p.CreatedAt
	rs.pulls = append(rs.pulls, p)
	writeJSON(w, http.StatusCreated, s.pullJSON(rs, p))
}

func (s *Server) getPull(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, p := s.findPull(r)
	if p == nil {
		writeJSON(w, http.StatusNotFound, notFound())
		return
	}
	writeJSON(w, http.StatusOK, s.pullJSON(rs, p))
}

func (s *Server) editPull(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, p := s.findPull(r)
	if p == nil {
		writeJSON(w, http.StatusNotFound, notFound())
		return
	}
	var in struct {
		Title, Body, State, Base *string
	}
	if !s.decode(w, r, &in, "title", "body", "state", "base", "maintainer_can_modify") {
		return
	}
	if in.Body != nil && utf8.RuneCountInString(*in.Body) > 65536 {
		s.validationFailed(w, r, "body", "too_long")
		return
	}
	if in.State != nil && *in.State != "open" && *in.State != "closed" {
		s.validationFailed(w, r, "state", "invalid")
		return
	}
	for dst, src := range map[*string]*string{&p.Title: in.Title, &p.Body: in.Body, &p.State: in.State, &p.Base: in.Base} {
		if src != nil {
			*dst = *src
		}
	}
	p.UpdatedAt = s.tick()
	writeJSON(w, http.StatusOK, s.pullJSON(rs, p))
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, n, ok := s.issue(w, r)
	if !ok {
		return
	}
	var match []*Comment
	for _, c := range rs.comments {
		if c.Issue == n {
			match = append(match, c)
		}
	}
	writePage(s, w, r, match, func(c *Comment) any { return s.commentJSON(rs, c) })
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, n, ok := s.issue(w, r)
	if !ok {
		return
	}
	var in struct{ Body *string }
	if !s.decode(w, r, &in, "body") {
		return
	}
	if !s.validBody(w, r, in.Body) {
		return
	}
	c := &Comment{ID: s.id(), Issue: n, Body: *in.Body, User: s.user, CreatedAt: s.tick()}
	c.UpdatedAt = c.CreatedAt
	rs.comments = append(rs.comments, c)
	writeJSON(w, http.StatusCreated, s.commentJSON(rs, c))
}

func (s *Server) getComment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, c := s.findComment(r)
	if c == nil {
		writeJSON(w, http.StatusNotFound, notFound())
		return
	}
	writeJSON(w, http.StatusOK, s.commentJSON(rs, c))
}

func (s *Server) editComment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, c := s.findComment(r)
	if c == nil {
		writeJSON(w, http.StatusNotFound, notFound())
		return
	}
	var in struct{ Body *string }
	if !s.decode(w, r, &in, "body") {
		return
	}
	if !s.validBody(w, r, in.Body) {
		return
	}
	c.Body = *in.Body
	c.UpdatedAt = s.tick()
	writeJSON(w, http.StatusOK, s.commentJSON(rs, c))
}

func (s *Server) deleteComment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, c := s.findComment(r)
	if c == nil {
		writeJSON(w, http.StatusNotFound, notFound())
		return
	}
	rs.comments = slices.DeleteFunc(rs.comments, func(x *Comment) bool { return x == c })
	w.WriteHeader(http.StatusNoContent)
}

// --- helpers (called with s.mu held) ---

func (s *Server) findPull(r *http.Request) (*repoState, *PullRequest) {
	rs := s.repo(r.PathValue("owner") + "/" + r.PathValue("repo"))
	n, err := strconv.Atoi(r.PathValue("number"))
	if err != nil {
		return rs, nil
	}
	for _, p := range rs.pulls {
		if p.Number == n {
			return rs, p
		}
	}
	return rs, nil
}

// issue resolves the issue number of the path; only pull requests exist.
func (s *Server) issue(w http.ResponseWriter, r *http.Request) (*repoState, int, bool) {
	rs, p := s.findPull(r)
	if p == nil {
		writeJSON(w, http.StatusNotFound, notFound())
		return rs, 0, false
	}
	return rs, p.Number, true
}

func (s *Server) findComment(r *http.Request) (*repoState, *Comment) {
	rs := s.repo(r.PathValue("owner") + "/" + r.PathValue("repo"))
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return rs, nil
	}
	for _, c := range rs.comments {
		if c.ID == id {
			return rs, c
		}
	}
	return rs, nil
}

func (s *Server) validBody(w http.ResponseWriter, r *http.Request, body *string) bool {
	switch {
	case body == nil || strings.TrimSpace(*body) == "":
		s.validationFailed(w, r, "body", "missing_field")
		return false
	case utf8.RuneCountInString(*body) > 65536:
		s.validationFailed(w, r, "body", "too_long")
		return false
	}
	return true
}

// decode decodes the JSON body into v, failing the test (and answering
// 422) on fields the endpoint does not take.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any, allowed ...string) bool {
	body, _ := io.ReadAll(r.Body)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		writeJSON(w, http.StatusBadRequest, apiError("Problems parsing JSON"))
		return false
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(allowed, k) {
			s.t.Errorf("githubtest: %s %s: field %q is not a parameter of this endpoint", r.Method, r.URL.Path, k)
			s.validationFailed(w, r, k, "invalid")
			return false
		}
	}
	if err := json.Unmarshal(body, v); err != nil {
		s.t.Errorf("githubtest: %s %s: %v", r.Method, r.URL.Path, err)
		writeJSON(w, http.StatusBadRequest, apiError("Problems parsing JSON"))
		return false
	}
	return true
}

func (s *Server) validationFailed(w http.ResponseWriter, r *http.Request, field, code string) {
	resource := "PullRequest"
	switch {
	case strings.Contains(r.URL.Path, "/comments"):
		resource = "IssueComment"
	case strings.HasSuffix(r.URL.Path, "/statuses"):
		resource = "DeploymentStatus"
	case strings.Contains(r.URL.Path, "/deployments"):
		resource = "Deployment"
	}
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"message":           "Validation Failed",
		"errors":            []any{map[string]any{"resource": resource, "field": field, "code": code}},
		"documentation_url": "https://docs.github.com/rest",
		"status":            "422",
	})
}

type pageRange struct{ from, to int }

// page reads per_page and page, sets the Link header for n items and
// returns the slice bounds of the requested page.
func (s *Server) page(w http.ResponseWriter, r *http.Request, n int) (pageRange, bool) {
	q := r.URL.Query()
	per, page := 30, 1
	if v := q.Get("per_page"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 {
			s.validationFailed(w, r, "per_page", "invalid")
			return pageRange{}, false
		}
		per = min(p, 100)
	}
	if v := q.Get("page"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 {
			s.validationFailed(w, r, "page", "invalid")
			return pageRange{}, false
		}
		page = p
	}
	last := max(1, (n+per-1)/per)
	link := func(p int, rel string) string {
		lq := maps.Clone(q)
		lq.Set("page", strconv.Itoa(p))
		lq.Set("per_page", strconv.Itoa(per))
		return fmt.Sprintf("<%s%s?%s>; rel=%q", strings.TrimSuffix(s.URL, "/"), r.URL.Path, lq.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(min(page-1, last), "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	from := min((page-1)*per, n)
	return pageRange{from: from, to: min(from+per, n)}, true
}

// --- JSON shapes, after GitHub's REST API documentation ---

func (s *Server) userJSON(login string) map[string]any {
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	id := int64(0)
	for _, c := range login {
		id = id*31 + int64(c)
	}
	if id < 0 {
		id = -id
	}
	id %= 100_000_000
	return map[string]any{
		"login":      login,
		"id":         id,
		"node_id":    "U_" + strconv.FormatInt(id, 36),
		"avatar_url": "https://avatars.githubusercontent.com/u/" + strconv.FormatInt(id, 10),
		"url":        s.URL + "users/" + url.PathEscape(login),
		"html_url":   "https://github.com/" + url.PathEscape(login),
		"type":       typ,
		"site_admin": false,
	}
}

func (s *Server) repoJSON(rs *repoState) map[string]any {
	return map[string]any{
		"id":             rs.id,
		"node_id":        "R_" + strconv.FormatInt(rs.id, 36),
		"name":           rs.name,
		"full_name":      rs.owner + "/" + rs.name,
		"owner":          s.userJSON(rs.owner),
		"private":        true,
		"html_url":       "https://github.com/" + rs.owner + "/" + rs.name,
		"url":            s.URL + "repos/" + rs.owner + "/" + rs.name,
		"default_branch": "main",
	}
}

func fakeSHA(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

func (s *Server) branchJSON(rs *repoState, label string) map[string]any {
	owner, ref, _ := strings.Cut(label, ":")
	return map[string]any{
		"label": label,
		"ref":   ref,
		"sha":   fakeSHA(rs.owner + "/" + rs.name + ":" + label),
		"user":  s.userJSON(owner),
		"repo":  s.repoJSON(rs),
	}
}

func timeJSON(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (s *Server) pullJSON(rs *repoState, p *PullRequest) map[string]any {
	api := s.URL + "repos/" + rs.owner + "/" + rs.name
	html := "https://github.com/" + rs.owner + "/" + rs.name + "/pull/" + strconv.Itoa(p.Number)
	var body any
	if p.Body != "" {
		body = p.Body
	}
	var closedAt, mergedAt any
	if p.State == "closed" {
		closedAt = timeJSON(p.UpdatedAt)
	}
	if !p.MergedAt.IsZero() {
		mergedAt = timeJSON(p.MergedAt)
	}
	return map[string]any{
		"url":                 api + "/pulls/" + strconv.Itoa(p.Number),
		"id":                  rs.id*100_000 + int64(p.Number),
		"node_id":             "PR_" + strconv.FormatInt(rs.id*100_000+int64(p.Number), 36),
		"html_url":            html,
		"diff_url":            html + ".diff",
		"patch_url":           html + ".patch",
		"issue_url":           api + "/issues/" + strconv.Itoa(p.Number),
		"comments_url":        api + "/issues/" + strconv.Itoa(p.Number) + "/comments",
		"number":              p.Number,
		"state":               p.State,
		"locked":              false,
		"title":               p.Title,
		"user":                s.userJSON(p.User),
		"body":                body,
		"labels":              []any{},
		"created_at":          timeJSON(p.CreatedAt),
		"updated_at":          timeJSON(p.UpdatedAt),
		"closed_at":           closedAt,
		"merged_at":           mergedAt,
		"merge_commit_sha":    nil,
		"draft":               false,
		"head":                s.branchJSON(rs, p.Head),
		"base":                s.branchJSON(rs, rs.owner+":"+p.Base),
		"author_association":  "NONE",
		"auto_merge":          nil,
		"active_lock_reason":  nil,
		"requested_reviewers": []any{},
	}
}

func (s *Server) commentJSON(rs *repoState, c *Comment) map[string]any {
	api := s.URL + "repos/" + rs.owner + "/" + rs.name
	return map[string]any{
		"id":                       c.ID,
		"node_id":                  "IC_" + strconv.FormatInt(c.ID, 36),
		"url":                      api + "/issues/comments/" + strconv.FormatInt(c.ID, 10),
		"html_url":                 fmt.Sprintf("https://github.com/%s/%s/pull/%d#issuecomment-%d", rs.owner, rs.name, c.Issue, c.ID),
		"issue_url":                api + "/issues/" + strconv.Itoa(c.Issue),
		"body":                     c.Body,
		"user":                     s.userJSON(c.User),
		"created_at":               timeJSON(c.CreatedAt),
		"updated_at":               timeJSON(c.UpdatedAt),
		"author_association":       "NONE",
		"performed_via_github_app": nil,
	}
}

func apiError(msg string) map[string]any {
	return map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"}
}

func notFound() map[string]any {
	return map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if v == nil || status == http.StatusNoContent {
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

// writePage answers a list call with the page of items the request asks
// for (per_page, page), each as toJSON makes it.
func writePage[T any](s *Server, w http.ResponseWriter, r *http.Request, items []T, toJSON func(T) any) {
	page, ok := s.page(w, r, len(items))
	if !ok {
		return
	}
	out := []any{}
	for _, it := range items[page.from:page.to] {
		out = append(out, toJSON(it))
	}
	writeJSON(w, http.StatusOK, out)
}

package githubtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// Deployment is a GitHub deployment held by the server, with its statuses
// in the order they were posted.
type Deployment struct {
	ID          int64
	Ref         string
	Task        string
	Environment string
	Description string
	// Payload is the payload as sent (decoded JSON), nil when none was.
	Payload any
	// Transient and Production are the deployment's
	// transient_environment and production_environment.
	Transient  bool
	Production bool
	Creator    string
	CreatedAt  time.Time
	Statuses   []DeploymentStatus
}

// DeploymentStatus is one status posted on a deployment.
type DeploymentStatus struct {
	ID             int64
	State          string
	Description    string
	EnvironmentURL string
	LogURL         string
	TargetURL      string
	// NoAutoInactive: the status was posted with auto_inactive false (the
	// environment's earlier deployments keep their state).
	NoAutoInactive bool
	CreatedAt      time.Time
}

// LastStatus returns the deployment's newest status, if it has one.
func (d Deployment) LastStatus() (DeploymentStatus, bool) {
	if len(d.Statuses) == 0 {
		return DeploymentStatus{}, false
	}
	return d.Statuses[len(d.Statuses)-1], true
}

// deploymentStates are the states GitHub accepts for a deployment status.
var deploymentStates = []string{"error", "failure", "inactive", "in_progress", "queued", "pending", "success"}

// maxStatusDescription is GitHub's limit on a status description.
const maxStatusDescription = 140

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Deployments returns the deployments of repo ("owner/name"), oldest first,
// each with its statuses.
func (s *Server) Deployments(repo string) []Deployment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Deployment
	for _, d := range s.repo(repo).deployments {
		c := *d
		c.Statuses = slices.Clone(d.Statuses)
		out = append(out, c)
	}
	return out
}

func (s *Server) createDeployment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.repo(r.PathValue("owner") + "/" + r.PathValue("repo"))
	var in struct {
		Ref              *string         `json:"ref"`
		Task             *string         `json:"task"`
		AutoMerge        *bool           `json:"auto_merge"`
		RequiredContexts *[]string       `json:"required_contexts"`
		Payload          json.RawMessage `json:"payload"`
		Environment      *string         `json:"environment"`
		Description      *string         `json:"description"`
		Transient        *bool           `json:"transient_environment"`
		Production       *bool           `json:"production_environment"`
	}
	if !s.decode(w, r, &in, "ref", "task", "auto_merge", "required_contexts", "payload", "environment",
		"description", "transient_environment", "production_environment") {
		return
	}
	if in.Ref == nil || *in.Ref == "" {
		s.validationFailed(w, r, "ref", "missing_field")
		return
	}
	d := &Deployment{ID: s.id(), Ref: *in.Ref, Task: "deploy", Environment: "production", Creator: s.user, CreatedAt: s.tick()}
	if in.Task != nil {
		d.Task = *in.Task
	}
	if in.Environment != nil {
		d.Environment = *in.Environment
	}
	if in.Description != nil {
		d.Description = *in.Description
	}
	d.Transient = in.Transient != nil && *in.Transient
	// GitHub's default: production when the environment is named so.
	d.Production = d.Environment == "production"
	if in.Production != nil {
		d.Production = *in.Production
	}
	if len(in.Payload) > 0 && string(in.Payload) != "null" {
		if err := json.Unmarshal(in.Payload, &d.Payload); err != nil {
			s.validationFailed(w, r, "payload", "invalid")
			return
		}
	}
	rs.deployments = append(rs.deployments, d)
	writeJSON(w, http.StatusCreated, s.deploymentJSON(rs, d))
}

func (s *Server) createDeploymentStatus(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.repo(r.PathValue("owner") + "/" + r.PathValue("repo"))
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var d *Deployment
	if err == nil {
		i := slices.IndexFunc(rs.deployments, func(d *Deployment) bool { return d.ID == id })
		if i >= 0 {
			d = rs.deployments[i]
		}
	}
	if d == nil {
		writeJSON(w, http.StatusNotFound, notFound())
		return
	}
	var in struct {
		State          *string `json:"state"`
		TargetURL      *string `json:"target_url"`
		LogURL         *string `json:"log_url"`
		Description    *string `json:"description"`
		EnvironmentURL *string `json:"environment_url"`
		AutoInactive   *bool   `json:"auto_inactive"`
	}
	if !s.decode(w, r, &in, "state", "target_url", "log_url", "description", "environment", "environment_url", "auto_inactive") {
		return
	}
	switch {
	case in.State == nil:
		s.validationFailed(w, r, "state", "missing_field")
		return
	case !slices.Contains(deploymentStates, *in.State):
		s.validationFailed(w, r, "state", "invalid")
		return
	case in.Description != nil && utf8.RuneCountInString(*in.Description) > maxStatusDescription:
		s.validationFailed(w, r, "description", "too_long")
		return
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"environment_url", in.EnvironmentURL}, {"log_url", in.LogURL}, {"target_url", in.TargetURL}} {
		if f.v == nil || *f.v == "" {
			continue
		}
		if u, err := url.Parse(*f.v); err != nil || u.Scheme == "" || u.Host == "" {
			s.validationFailed(w, r, f.name, "invalid")
			return
		}
	}
	st := DeploymentStatus{ID: s.id(), State: *in.State, CreatedAt: s.tick(),
		Description: deref(in.Description), EnvironmentURL: deref(in.EnvironmentURL),
		LogURL: deref(in.LogURL), TargetURL: deref(in.TargetURL), NoAutoInactive: in.AutoInactive != nil && !*in.AutoInactive}
	d.Statuses = append(d.Statuses, st)
	writeJSON(w, http.StatusCreated, s.deploymentStatusJSON(rs, d, st))
}

// listDeployments answers GET /repos/{owner}/{repo}/deployments: newest
// first, filtered by sha, ref, task and environment as GitHub does.
func (s *Server) listDeployments(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.repo(r.PathValue("owner") + "/" + r.PathValue("repo"))
	q := r.URL.Query()
	for k := range q {
		if !slices.Contains([]string{"sha", "ref", "task", "environment", "per_page", "page"}, k) {
			s.validationFailed(w, r, k, "invalid")
			return
		}
	}
	var match []*Deployment
	for _, d := range rs.deployments {
		if (q.Get("ref") == "" || q.Get("ref") == d.Ref) && (q.Get("task") == "" || q.Get("task") == d.Task) &&
			(q.Get("environment") == "" || q.Get("environment") == d.Environment) &&
			(q.Get("sha") == "" || q.Get("sha") == d.Ref) {
			match = append(match, d)
		}
	}
	slices.Reverse(match)
	writePage(s, w, r, match, func(d *Deployment) any { return s.deploymentJSON(rs, d) })
}

// listDeploymentStatuses answers GET
// /repos/{owner}/{repo}/deployments/{id}/statuses: newest first.
func (s *Server) listDeploymentStatuses(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.repo(r.PathValue("owner") + "/" + r.PathValue("repo"))
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	i := slices.IndexFunc(rs.deployments, func(d *Deployment) bool { return err == nil && d.ID == id })
	if i < 0 {
		writeJSON(w, http.StatusNotFound, notFound())
		return
	}
	for k := range r.URL.Query() {
		if k != "per_page" && k != "page" {
			s.validationFailed(w, r, k, "invalid")
			return
		}
	}
	d := rs.deployments[i]
	sts := slices.Clone(d.Statuses)
	slices.Reverse(sts)
	writePage(s, w, r, sts, func(st DeploymentStatus) any { return s.deploymentStatusJSON(rs, d, st) })
}

func (s *Server) deploymentJSON(rs *repoState, d *Deployment) map[string]any {
	api := s.URL + "repos/" + rs.owner + "/" + rs.name
	u := api + "/deployments/" + strconv.FormatInt(d.ID, 10)
	sha := d.Ref
	if !fullSHA.MatchString(sha) {
		sha = fakeSHA(rs.owner + "/" + rs.name + ":" + d.Ref)
	}
	payload := d.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	return map[string]any{
		"url":                    u,
		"id":                     d.ID,
		"node_id":                "DE_" + strconv.FormatInt(d.ID, 36),
		"sha":                    sha,
		"ref":                    d.Ref,
		"task":                   d.Task,
		"payload":                payload,
		"original_environment":   d.Environment,
		"environment":            d.Environment,
		"description":            d.Description,
		"creator":                s.userJSON(d.Creator),
		"created_at":             timeJSON(d.CreatedAt),
		"updated_at":             timeJSON(d.CreatedAt),
		"statuses_url":           u + "/statuses",
		"repository_url":         api,
		"transient_environment":  d.Transient,
		"production_environment": d.Production,
	}
}

func (s *Server) deploymentStatusJSON(rs *repoState, d *Deployment, st DeploymentStatus) map[string]any {
	api := s.URL + "repos/" + rs.owner + "/" + rs.name
	du := api + "/deployments/" + strconv.FormatInt(d.ID, 10)
	return map[string]any{
		"url":             du + "/statuses/" + strconv.FormatInt(st.ID, 10),
		"id":              st.ID,
		"node_id":         "DES_" + strconv.FormatInt(st.ID, 36),
		"state":           st.State,
		"creator":         s.userJSON(s.user),
		"description":     st.Description,
		"environment":     d.Environment,
		"target_url":      st.TargetURL,
		"log_url":         st.LogURL,
		"environment_url": st.EnvironmentURL,
		"created_at":      timeJSON(st.CreatedAt),
		"updated_at":      timeJSON(st.CreatedAt),
		"deployment_url":  du,
		"repository_url":  api,
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

package lifecycle

import (
	"context"
	"encoding/json"
	"path"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// History is what made an app: the commits that changed its folder or
// its template's, and the deployments the webhook recorded.
type History struct {
	App string // project/name
	// Environment is the environment the deployments are of ("": all).
	Environment string
	File        string   // its spec file, as messages show it
	Paths       []string // the folders whose commits are listed
	// Revisions are the commits, newest first.
	Revisions []Revision
	// Deployments are the app's deployments, newest first (none without
	// Options.Deployments).
	Deployments []api.Deployment
}

// Revision is one commit that changed an app's spec.
type Revision struct {
	Commit      string    `json:"commit"`
	Author      string    `json:"author"`
	AuthorEmail string    `json:"author_email"`
	Date        time.Time `json:"date"`
	Subject     string    `json:"subject"`
	Message     string    `json:"message"`
	// Deployments lists the ids of the webhook's deployments of this spec
	// revision, newest first.
	Deployments []int64 `json:"deployments,omitempty"`
}

// MarshalJSON writes the history as render history --format json prints
// it: each deployment by the fields that place it (id, revisions, phase,
// message, times, live URL), not the checks and components the webhook's
// view also holds.
func (h History) MarshalJSON() ([]byte, error) {
	type deployment struct {
		ID           int64     `json:"id"`
		Environment  string    `json:"environment,omitempty"`
		Revision     string    `json:"revision"`
		SpecRevision string    `json:"spec_revision,omitempty"`
		Phase        api.Phase `json:"phase"`
		Message      string    `json:"message,omitempty"`
		StartedAt    time.Time `json:"started_at"`
		FinishedAt   time.Time `json:"finished_at,omitzero"`
		LiveURL      string    `json:"live_url,omitempty"`
	}
	out := struct {
		App         string       `json:"app"`
		Environment string       `json:"environment,omitempty"`
		File        string       `json:"file"`
		Paths       []string     `json:"paths"`
		Revisions   []Revision   `json:"revisions"`
		Deployments []deployment `json:"deployments,omitempty"`
	}{App: h.App, Environment: h.Environment, File: h.File, Paths: h.Paths, Revisions: h.Revisions}
	if out.Revisions == nil {
		out.Revisions = []Revision{}
	}
	for _, d := range h.Deployments {
		out.Deployments = append(out.Deployments, deployment{
			ID: d.ID, Environment: d.Environment, Revision: d.Revision, SpecRevision: d.SpecRevision, Phase: d.Phase,
			Message: d.Message, StartedAt: d.StartedAt, FinishedAt: d.FinishedAt, LiveURL: d.LiveURL,
		})
	}
	return json.Marshal(out)
}

// ReadHistory lists, newest first, the commits that changed the app's
// folder or its template's and, with o.Deployments, the app's deployments,
// marking each revision with the deployments of it. A limit above zero
// stops each list at that many.
func ReadHistory(ctx context.Context, o Options, limit int) (*History, error) {
	w, a, err := openApp(o)
	if err != nil {
		return nil, err
	}
	g, rel, err := openGit(o, w.root, w.abs)
	if err != nil {
		return nil, err
	}
	defer g.Close()

	// The app's folder, and its template's, make what it renders.
	paths := []string{path.Dir(a.File)}
	if a.Spec.Template != nil {
		paths = append(paths, load.TemplateDir(a.Spec.Template.Name))
	}
	gitPaths := make([]string, len(paths))
	for i, p := range paths {
		gitPaths[i] = path.Join(rel, p)
	}
	commits, err := g.History(ctx, "HEAD", limit, gitPaths...)
	if err != nil {
		return nil, refused(err)
	}
	h := &History{App: a.Ref(), Environment: o.Environment, File: w.display(a.File), Paths: paths, Revisions: []Revision{}}
	for _, c := range commits {
		h.Revisions = append(h.Revisions, Revision{
			Commit: c.Hash, Author: c.Author.Name, AuthorEmail: c.Author.Email, Date: c.Author.When.UTC(),
			Subject: c.Subject, Message: strings.TrimRight(c.Message, "\n"),
		})
	}
	if o.Deployments == nil {
		return h, nil
	}
	deps, err := o.Deployments.DeploymentsIn(ctx, a.Project, a.Spec.Name, o.Environment, limit)
	if err != nil {
		return nil, refused(err)
	}
	h.Deployments = deps
	for i := range h.Revisions {
		for _, d := range deps {
			if d.SpecRevision != "" && d.SpecRevision == h.Revisions[i].Commit {
				h.Revisions[i].Deployments = append(h.Revisions[i].Deployments, d.ID)
			}
		}
	}
	return h, nil
}

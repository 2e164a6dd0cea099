package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// envView is one environment of an app as its page shows them side by
// side: the release that runs there (revision, spec revision, images),
// its phase and age and, for an environment after the first, what it
// lacks of the one before it and the command that promotes it.
type envView struct {
	Name string
	// URL is the app's page in the environment; Current marks the one
	// this page shows.
	URL     string
	Current bool
	// Phase is empty when the app never ran in the environment.
	Phase    store.Phase
	Revision revLink
	Spec     revLink
	Images   []string
	Age      string
	// From is the environment before this one; Lacks what this one
	// lacks of the release that runs there, Waiting why a promotion
	// would be refused now, and Promote the command that promotes it.
	From    string
	Lacks   []string
	Waiting string
	Promote string
}

// appInPage returns the app the app page shows: in the environment its
// query names or, naming none, outside environments, or else in the
// environment of its newest deployment. An environment that cannot name
// one is an app that does not exist.
func (s *Server) appInPage(ctx context.Context, app layout.AppRef, env string) (store.App, error) {
	if env != "" && !validEnvironment(env) {
		return store.App{}, store.ErrNotFound
	}
	a, err := s.cfg.Store.App(ctx, app, env)
	if env != "" || !errors.Is(err, store.ErrNotFound) {
		return a, err
	}
	ds, derr := s.cfg.Store.Deployments(ctx, app, 1, 0)
	if derr != nil {
		return a, derr
	}
	if len(ds) == 0 || ds[0].Environment == "" {
		return a, err
	}
	return s.cfg.Store.App(ctx, app, ds[0].Environment)
}

// envAppURL is the page of the app in its environment; query, when set,
// is added to it ("before=…").
func envAppURL(a store.App, query string) string {
	var qs []string
	if a.Environment != "" {
		qs = append(qs, "environment="+url.QueryEscape(a.Environment))
	}
	if query != "" {
		qs = append(qs, query)
	}
	if len(qs) == 0 {
		return appPageURL(a.AppRef)
	}
	return appPageURL(a.AppRef) + "?" + strings.Join(qs, "&")
}

// environments fills the app's environments side by side, in the order
// Config.Environments gives (the platform's), then any other the app
// ran in by name. An app that runs in no environment has none.
func (s *Server) environments(ctx context.Context, v *appView) error {
	apps, err := s.cfg.Store.Apps(ctx)
	if err != nil {
		return err
	}
	in := map[string]store.App{}
	for _, a := range apps {
		if a.Project == v.App.Project && a.Name == v.App.Name && a.Environment != "" {
			in[a.Environment] = a
		}
	}
	if len(in) == 0 {
		return nil
	}
	names := slices.Clone(s.cfg.Environments)
	var others []string
	for env := range in {
		if !slices.Contains(names, env) {
			others = append(others, env)
		}
	}
	slices.Sort(others)
	names = append(names, others...)
	now := s.now()
	var prev *envView
	for _, env := range names {
		a, ok := in[env]
		ev := envView{Name: env, URL: envAppURL(store.App{AppRef: v.App.AppRef, Environment: env}, ""),
			Current: env == v.App.Environment}
		if ok {
			d, err := s.cfg.Store.Deployment(ctx, a.DeploymentID)
			if err != nil {
				return err
			}
			ev.Phase = a.Phase
			ev.Revision = linkRevision(s.pages.cfg.FleetRepoURL, d.Revision)
			ev.Spec = linkRevision(s.pages.cfg.AppsRepoURL, d.SpecRevision)
			ev.Images = releaseImages(decodeResult(d))
			ev.Age = fmtAge(now.Sub(d.StartedAt))
		}
		// What an environment lacks is what the one before it in the
		// platform's order runs (the one it is promoted from).
		if prev != nil && prev.Phase != "" && slices.Contains(s.cfg.Environments, env) {
			ev.From = prev.Name
			ev.Lacks = lacks(*prev, ev)
			if len(ev.Lacks) > 0 {
				ev.Promote = fmt.Sprintf("render promote %s --to %s", v.App.Ref(), env)
				if prev.Phase != store.PhaseRunning {
					ev.Waiting = fmt.Sprintf("%s's release is %s: a promotion waits until it runs with every check green", prev.Name, prev.Phase)
				}
			}
		}
		v.Environments = append(v.Environments, ev)
		prev = &v.Environments[len(v.Environments)-1]
	}
	return nil
}

// releaseImages are the images the workloads of a deployment run, as its
// readiness check read them, each once, in order.
func releaseImages(res probe.Result) []string {
	var out []string
	for _, c := range res.Check(probe.CheckReadiness).Components {
		out = append(out, c.Images...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// lacks lists what next lacks of the release that runs in prev: its spec
// revision, and each image prev runs that next does not.
func lacks(prev, next envView) []string {
	var out []string
	if prev.Spec.Full != "" && prev.Spec.Full != next.Spec.Full {
		out = append(out, "spec revision "+prev.Spec.Short)
	}
	for _, img := range prev.Images {
		if !slices.Contains(next.Images, img) {
			out = append(out, "image "+img)
		}
	}
	return out
}

// fmtAge shows how long ago something started: minutes, hours or days.
func fmtAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%02dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// loadEnvironmentTemplate adds the environments section (ui/app_env.html)
// to the app page's templates.
func (p *pages) loadEnvironmentTemplate() error {
	if _, err := p.tmpl["app"].ParseFS(pageTemplates, "ui/app_env.html"); err != nil {
		return fmt.Errorf("parsing the app page's environments: %w", err)
	}
	return nil
}

// appInEnvironment names an app in its environment, as page titles show it.
func appInEnvironment(app, env string) string {
	if env == "" {
		return app
	}
	return app + " in " + env
}

// validateEnvironments refuses an environment that is not a DNS label,
// or is named twice.
func validateEnvironments(envs []string) error {
	for i, env := range envs {
		if !validEnvironment(env) {
			return fmt.Errorf("webhook: Config.Environments: %q is not a DNS label", env)
		}
		if slices.Contains(envs[:i], env) {
			return fmt.Errorf("webhook: Config.Environments: %q is named twice", env)
		}
	}
	return nil
}

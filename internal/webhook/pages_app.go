package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// checkView is one of the three checks as the app page shows it.
type checkView struct {
	probe.Check
	Step  int
	Title string
	// What the check looks at, in a few words.
	About string
}

var checkTitles = map[string]string{
	probe.CheckSync:         "GitOps sync",
	probe.CheckReadiness:    "Workload readiness",
	probe.CheckReachability: "Reachability and certificate",
}

// checkAbout says what a check looks at, as far as its state allows: only
// a passed check says that what it waits for happened.
func checkAbout(c probe.Check) string {
	passed := c.State == probe.StatePassed
	switch c.Name {
	case probe.CheckSync:
		switch {
		case passed:
			return "Flux applied the revision"
		case c.State == probe.StateFailed:
			return "Flux did not apply the revision"
		case c.State == probe.StateGone:
			return "Flux pruned the app's objects"
		}
		return "waits for Flux to apply the revision"
	case probe.CheckReadiness:
		switch {
		case passed:
			return "every workload runs the new spec and is available"
		case c.State == probe.StateSkipped:
			return "not checked: whether every workload runs the new spec and is available"
		}
		return "waits for every workload to run the new spec and be available"
	case probe.CheckReachability:
		switch {
		case passed:
			return "an HTTPS request to each host succeeded with a valid certificate"
		case c.State == probe.StateSkipped:
			return "not checked: whether an HTTPS request to each host succeeds with a valid certificate"
		}
		return "waits for an HTTPS request to each host to succeed with a valid certificate"
	}
	return ""
}

// componentView is one component of the app as its page shows it.
type componentView struct {
	ComponentHealth
	// FluxObject is the kind, namespace and name of the Flux object of
	// the component's latest event, when the checks saw none of its objects.
	FluxObject string
}

// historyView is one deployment of the app's history.
type historyView struct {
	ID         int64
	Current    bool
	Revision   revLink
	Spec       revLink
	Phase      store.Phase
	Badge      badgeView
	Message    string
	Started    string
	Finished   string
	Changes    []store.PhaseChange
	Flux       []store.Event
	Rollback   string
	NoRollback string
	// EarlierChanges counts the phase changes left out (the newest are shown).
	EarlierChanges int
}

// logView is the recent log of one pod of a component.
type logView struct {
	Component, Pod, Container, Log, Error string
}

type appView struct {
	pageBase
	// Elsewhere says why the cluster's pods, events, logs and usage are
	// not shown: the app's environment runs on another cluster.
	Elsewhere  string
	App        store.App
	Phase      store.Phase
	Badge      badgeView
	Message    string
	Active     bool
	Revision   revLink
	Spec       revLink
	LiveURL    string
	Deployment store.Deployment
	Started    string
	Finished   string
	Timeout    string
	Checks     []checkView
	TimedOut   bool
	Paused     bool
	Components []componentView
	History    []historyView
	OlderURL   string
	NewestURL  string
	Kube       bool
	Pods       []PodView
	PodsError  string
	Events     []EventView
	EventError string
	Logs       []logView
	// Usage is the app's requested and used resources and their cost;
	// nil without a cluster.
	Usage *usageView
	// Operator: the visitor is an operator of the app's project, and sees
	// the rollback commands.
	Operator bool
	// Environments are the app's environments side by side (pages_env.go).
	Environments []envView
}

const (
	historyPageSize = 10
	logTail         = 40
	// maxPhaseChanges bounds the phase changes read for a history page,
	// changesShown those shown per deployment.
	maxPhaseChanges = 1000
	changesShown    = 20
)

func (s *Server) handleAppPage(w http.ResponseWriter, r *http.Request) {
	app := appOfPath(r)
	var (
		v   appView
		err error
	)
	// An app of a project the visitor may not see is one that does not
	// exist: the same answer, nothing read.
	if visitorFrom(r).grant.allows(app.Project) {
		v, err = s.appPage(r, app)
	} else {
		err = store.ErrNotFound
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.notFound(w, r, "No app "+app.Ref()+".")
		return
	case err != nil:
		s.log.Error("reading the history store", "err", err)
		plainError(w, http.StatusInternalServerError, "Reading the history store failed.")
		return
	}
	s.render(w, http.StatusOK, "app", v)
}

func (s *Server) appPage(r *http.Request, app layout.AppRef) (appView, error) {
	ctx := r.Context()
	seq, err := s.cfg.Store.LatestSeq(ctx)
	if err != nil {
		return appView{}, err
	}
	a, err := s.appInPage(ctx, app, r.URL.Query().Get("environment"))
	if err != nil {
		return appView{}, err
	}
	d, err := s.cfg.Store.Deployment(ctx, a.DeploymentID)
	if err != nil {
		return appView{}, err
	}
	res := decodeResult(d)
	pc := s.pages.cfg
	v := appView{pageBase: s.base(r, appInEnvironment(app.Ref(), a.Environment)), App: a, Phase: d.Phase, Badge: phaseBadge(d.Phase, res, true), Message: d.Message,
		Active:   d.Phase == store.PhasePending || d.Phase == store.PhaseDeploying || d.Phase == store.PhaseDegraded,
		Revision: linkRevision(pc.FleetRepoURL, d.Revision), Spec: linkRevision(pc.AppsRepoURL, d.SpecRevision),
		LiveURL: liveURL(d, res), Deployment: d, Started: fmtTime(d.StartedAt), Finished: fmtTime(d.FinishedAt),
		TimedOut: res.TimedOut, Paused: res.Paused}
	cl, unread := s.clusterOf(a.Environment)
	v.Kube = cl != nil && cl.kube != nil
	for _, c := range componentHealth(d, res) {
		v.Components = append(v.Components, componentView{ComponentHealth: c})
	}
	v.Stream = "/ui/stream?project=" + url.QueryEscape(app.Project) + "&app=" + url.QueryEscape(app.Name)
	if a.Environment != "" {
		v.Stream += "&environment=" + url.QueryEscape(a.Environment)
	}
	v.Seq = seq
	if d.Timeout > 0 {
		v.Timeout = d.Timeout.String()
	}
	for i, c := range res.Checks {
		v.Checks = append(v.Checks, checkView{Check: c, Step: i + 1, Title: checkTitles[c.Name], About: checkAbout(c)})
	}
	v.Operator = visitorFrom(r).grant.roleOn(app.Project) >= roleOperator
	v.Elsewhere = s.elsewhere(a, unread)
	if err := s.history(ctx, &v, r.URL.Query().Get("before")); err != nil {
		return appView{}, err
	}
	if err := s.appEvents(ctx, &v, cl); err != nil {
		return appView{}, err
	}
	if err := s.environments(ctx, &v); err != nil {
		return appView{}, err
	}
	if v.Kube {
		s.podsAndLogs(ctx, &v, cl)
		s.usage(ctx, &v, cl)
	}
	return v, nil
}

// history fills a page of the app's deployments, newest first, with their
// phase changes, Flux's messages and a rollback command for each past one.
func (s *Server) history(ctx context.Context, v *appView, cursor string) error {
	a := v.App
	var before int64
	if cursor != "" {
		if n, err := decodeCursor(cursor); err == nil {
			before = n
			v.NewestURL = envAppURL(a, "") + "#history"
		}
	}
	ds, err := s.cfg.Store.DeploymentsIn(ctx, a.AppRef, a.Environment, historyPageSize+1, before)
	if err != nil {
		return err
	}
	if len(ds) > historyPageSize {
		ds = ds[:historyPageSize]
		v.OlderURL = envAppURL(a, "before="+encodeCursor(ds[len(ds)-1].ID)) + "#history"
	}
	if before != 0 {
		// An older page does not hold the current deployment, whose end
		// the page's facts still show.
		if err := s.currentFailedAt(ctx, v); err != nil {
			return err
		}
	}
	if len(ds) == 0 {
		return nil
	}
	// The phase changes of the page's deployments (bounded: an app that
	// flaps between running and degraded for days has many), and Flux's
	// newest messages.
	changes, err := s.cfg.Store.AppPhaseChanges(ctx, a.AppRef, a.Environment, ds[len(ds)-1].ID, ds[0].ID, maxPhaseChanges)
	if err != nil {
		return err
	}
	events, err := s.cfg.Store.Events(ctx, a.AppRef, 200)
	if err != nil {
		return err
	}
	fluxObjects(v, events)
	byDep := map[int64][]store.PhaseChange{}
	for _, c := range changes {
		byDep[c.DeploymentID] = append(byDep[c.DeploymentID], c)
	}
	evByDep := map[int64][]store.Event{}
	for _, e := range events {
		if len(evByDep[e.DeploymentID]) < 5 {
			evByDep[e.DeploymentID] = append(evByDep[e.DeploymentID], e)
		}
	}
	target := a.Ref()
	if c := s.pages.cfg.ClusterName; c != "" && a.Environment == "" {
		target = c + "/" + target
	}
	if a.Environment != "" {
		target += " --env " + a.Environment
	}
	pc := s.pages.cfg
	for _, d := range ds {
		h := historyView{ID: d.ID, Current: d.ID == a.DeploymentID, Revision: linkRevision(pc.FleetRepoURL, d.Revision),
			Spec: linkRevision(pc.AppsRepoURL, d.SpecRevision), Phase: d.Phase, Message: d.Message,
			Started: fmtTime(d.StartedAt), Finished: fmtTime(d.FinishedAt), Flux: evByDep[d.ID]}
		h.Badge = phaseBadge(d.Phase, decodeResult(d), h.Current)
		cs := byDep[d.ID] // newest first
		if at := failedAt(d, cs); !at.IsZero() {
			// A deployment that failed after it had finished rolling out
			// (degraded for longer than its timeout) keeps the end of its
			// rollout as its end: it finished failing when it failed.
			h.Finished = fmtTime(at)
			if h.Current {
				v.Finished = h.Finished
			}
		}
		if len(cs) > changesShown {
			h.EarlierChanges = len(cs) - changesShown
			cs = cs[:changesShown]
		}
		slices.Reverse(cs)
		h.Changes = cs
		switch {
		case h.Current, !v.Operator:
		case d.SpecRevision == "":
			h.NoRollback = "no spec revision recorded: nothing to roll back to"
		default:
			h.Rollback = "render rollback " + target + " --to " + d.SpecRevision
		}
		v.History = append(v.History, h)
	}
	return nil
}

// currentFailedAt corrects the end of the page's current deployment when
// it failed after its rollout finished (failedAt), reading its own phase
// changes.
func (s *Server) currentFailedAt(ctx context.Context, v *appView) error {
	d := v.Deployment
	if d.Phase != store.PhaseFailed {
		return nil
	}
	a := v.App
	changes, err := s.cfg.Store.AppPhaseChanges(ctx, a.AppRef, a.Environment, d.ID, d.ID, maxPhaseChanges)
	if err != nil {
		return err
	}
	if at := failedAt(d, changes); !at.IsZero() {
		v.Finished = fmtTime(at)
	}
	return nil
}

// failedAt is when a failed deployment failed: its newest phase change to
// failed (changes newest first), if later than its recorded end.
func failedAt(d store.Deployment, changes []store.PhaseChange) time.Time {
	if d.Phase != store.PhaseFailed {
		return time.Time{}
	}
	for _, c := range changes {
		if c.To == store.PhaseFailed {
			if c.At.After(d.FinishedAt) {
				return c.At
			}
			break
		}
	}
	return time.Time{}
}

// fluxObjects names the Flux object of each current component the checks
// saw no object of, from Flux's newest event about it.
func fluxObjects(v *appView, events []store.Event) {
	for i := range v.Components {
		c := &v.Components[i]
		if len(c.Sync) > 0 || c.Flux == nil {
			continue
		}
		for _, e := range events { // newest first
			if e.DeploymentID == v.Deployment.ID && e.Kind == c.Flux.Kind && cmpOr(e.Component, e.Name) == c.Flux.Name {
				c.FluxObject = e.Kind + "/" + e.Namespace + "/" + e.Name
				break
			}
		}
		if c.FluxObject == "" {
			c.FluxObject = c.Flux.Kind + " of component " + c.Flux.Name
		}
	}
}

// appEvents fills the app's newest events: Flux's, from the store, and,
// with a cluster (cl, the app's environment's), the Kubernetes events of
// its workloads.
func (s *Server) appEvents(ctx context.Context, v *appView, cl *clusterClients) error {
	stored, err := s.cfg.Store.Events(ctx, v.App.AppRef, 30)
	if err != nil {
		return err
	}
	for _, e := range stored {
		v.Events = append(v.Events, EventView{Source: "flux", Time: e.EventTime, Type: e.Severity, Reason: e.Reason,
			Object: e.Kind + "/" + e.Namespace + "/" + e.Name, Message: e.Message})
	}
	if v.Kube {
		kev, err := kubeEvents(ctx, cl.kube, appNamespace(v.App.Project, v.App.Environment), v.App.AppRef)
		if err != nil {
			v.EventError = "Kubernetes events are not available from the cluster: " + err.Error()
		}
		v.Events = append(v.Events, kev...)
	}
	slices.SortStableFunc(v.Events, func(a, b EventView) int { return b.Time.Compare(a.Time) })
	v.Events = v.Events[:min(len(v.Events), 30)]
	return nil
}

// podsAndLogs fills the app's pods and the log tail of one running pod per
// component, from cl (the app's environment's cluster); a cluster that
// cannot answer leaves a message, not an error.
func (s *Server) podsAndLogs(ctx context.Context, v *appView, cl *clusterClients) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ns := appNamespace(v.App.Project, v.App.Environment)
	pods, err := listPods(ctx, cl.kube, ns, v.App.AppRef, "")
	if err != nil {
		v.PodsError = "Pods are not available from the cluster: " + err.Error()
		return
	}
	v.Pods = podViews(pods)
	seen := map[string]bool{}
	for _, p := range pods {
		comp := p.Labels[layout.LabelComponent]
		if seen[comp] || p.Spec.NodeName == "" || len(p.Spec.Containers) == 0 {
			continue
		}
		seen[comp] = true
		container := p.Spec.Containers[0].Name
		tail := int64(logTail)
		lv := logView{Component: comp, Pod: p.Name, Container: container}
		raw, err := cl.kube.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: container, TailLines: &tail}).DoRaw(ctx)
		if err != nil {
			lv.Error = "the logs are not available from the cluster (is the node's kubelet reachable?): " + err.Error()
		} else {
			lv.Log = string(raw)
		}
		v.Logs = append(v.Logs, lv)
	}
}

// otherCluster returns the cluster an environment runs on when it is not
// this webhook's (PagesConfig.EnvironmentClusters, and PreviewCluster for
// a pull request's preview, against ClusterName):
// this cluster's objects of an app's project and name are then another
// environment's. "" when the cluster is this one, or when that is not
// known.
func (s *Server) otherCluster(env string) string {
	pc := s.pages.cfg
	cluster := pc.EnvironmentClusters[env]
	if _, ok := layout.PreviewOf(env); ok && cluster == "" {
		cluster = pc.PreviewCluster
	}
	if env == "" || cluster == "" || pc.ClusterName == "" || cluster == pc.ClusterName {
		return ""
	}
	return cluster
}

// appNamespace is the namespace of an app's workloads in its environment:
// a pull request's preview has one of its own (layout.PreviewNamespace),
// every other environment runs in the project's.
func appNamespace(project, env string) string {
	if pr, ok := layout.PreviewOf(env); ok {
		return layout.PreviewNamespace(project, pr)
	}
	return probe.ProjectNamespace(project)
}

// elsewhere says why no cluster shows anything of the app: its
// environment runs on cluster unread, which the webhook does not read
// (clusterOf); "" when unread is.
func (s *Server) elsewhere(a store.App, unread string) string {
	if unread == "" {
		return ""
	}
	reads := "this webhook reads cluster " + s.pages.cfg.ClusterName
	if len(s.clusters) > 0 {
		reads = "this webhook has no kubeconfig of it (-cluster-kubeconfig)"
	}
	return fmt.Sprintf("%s runs on cluster %s; %s. The pods, events, logs, use and cost of %s are on %s's status pages.",
		a.Environment, unread, reads, a.Environment, unread)
}

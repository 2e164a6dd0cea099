package webhook

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// storeError answers a failed read of the history store: the database's
// own error is logged, never shown to the client.
func (s *Server) storeError(w http.ResponseWriter, err error) {
	s.log.Error("reading the history store", "err", err)
	writeError(w, http.StatusInternalServerError, "reading the history store failed")
}

func (s *Server) handleApps(w http.ResponseWriter, r *http.Request) {
	apps, err := s.cfg.Store.Apps(r.Context())
	if err != nil {
		s.storeError(w, err)
		return
	}
	g := visitorFrom(r).grant
	apps = slices.DeleteFunc(apps, func(a store.App) bool { return !g.allows(a.Project) })
	writeJSON(w, http.StatusOK, map[string]any{"apps": apps})
}

// environmentParam reads the query's environment ("" when it names
// none), answering 400 when it cannot name one.
func environmentParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	env := r.URL.Query().Get("environment")
	if env != "" && !validEnvironment(env) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("environment %q is not a DNS label", clip(env)))
		return "", false
	}
	return env, true
}

// appAndDeployment loads the app of the path in the query's environment
// and its current deployment.
func (s *Server) appAndDeployment(w http.ResponseWriter, r *http.Request) (store.App, store.Deployment, bool) {
	if !s.granted(w, r) {
		return store.App{}, store.Deployment{}, false
	}
	env, ok := environmentParam(w, r)
	if !ok {
		return store.App{}, store.Deployment{}, false
	}
	app := appOfPath(r)
	a, err := s.cfg.Store.App(r.Context(), app, env)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusNotFound, s.noApp(r.Context(), app, env))
		} else {
			s.storeError(w, err)
		}
		return a, store.Deployment{}, false
	}
	d, err := s.cfg.Store.Deployment(r.Context(), a.DeploymentID)
	if err != nil {
		s.storeError(w, err)
		return a, d, false
	}
	return a, d, true
}

// appOfPath is the app a request's path names, /…/{project}/{name}.
func appOfPath(r *http.Request) layout.AppRef {
	return layout.AppRef{Project: r.PathValue("project"), Name: r.PathValue("name")}
}

// granted answers a request for an app of a project the visitor may not
// see exactly as one for an app that does not exist, and returns false.
func (s *Server) granted(w http.ResponseWriter, r *http.Request) bool {
	app := appOfPath(r)
	if visitorFrom(r).grant.allows(app.Project) {
		return true
	}
	writeError(w, http.StatusNotFound, "no app "+app.Ref())
	return false
}

// decodeResult reads the stored probe result of a deployment.
func decodeResult(d store.Deployment) probe.Result {
	res := probe.NewResult()
	if len(d.Checks) == 0 {
		return res
	}
	var got probe.Result
	if err := json.Unmarshal(d.Checks, &got); err != nil || len(got.Checks) == 0 {
		return res
	}
	return got
}

// ComponentHealth is one component of an app as the API shows it.
type ComponentHealth struct {
	Name    string `json:"name"`
	Health  string `json:"health"`
	Message string `json:"message,omitempty"`
	// Flux is the latest Flux event of the component for the deployment.
	Flux *store.ComponentState `json:"flux,omitempty"`
	// Sync and Workloads are what the checks saw of its objects.
	Sync      []probe.ComponentStatus `json:"sync,omitempty"`
	Workloads []probe.ComponentStatus `json:"workloads,omitempty"`
}

// AppStatus is the answer of GET /api/v1/apps/{project}/{name}.
type AppStatus struct {
	store.App
	Deployment DeploymentSummary `json:"deployment"`
	Sync       SyncStatus        `json:"sync"`
	Components []ComponentHealth `json:"components"`
}

// DeploymentSummary identifies the current deployment.
type DeploymentSummary struct {
	ID         int64     `json:"id"`
	Revision   string    `json:"revision"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
}

// SyncStatus is the GitOps sync state of the current deployment.
type SyncStatus struct {
	State    probe.State `json:"state"`
	Revision string      `json:"revision"`
	Message  string      `json:"message,omitempty"`
}

func (s *Server) handleApp(w http.ResponseWriter, r *http.Request) {
	a, d, ok := s.appAndDeployment(w, r)
	if !ok {
		return
	}
	res := decodeResult(d)
	sync := res.Check(probe.CheckSync)
	writeJSON(w, http.StatusOK, AppStatus{
		App:        a,
		Deployment: DeploymentSummary{ID: d.ID, Revision: d.Revision, StartedAt: d.StartedAt, FinishedAt: d.FinishedAt},
		Sync:       SyncStatus{State: sync.State, Revision: d.Revision, Message: sync.Message},
		Components: componentHealth(d, res),
	})
}

// componentHealth merges event states and check results per component.
func componentHealth(d store.Deployment, res probe.Result) []ComponentHealth {
	by := map[string]*ComponentHealth{}
	get := func(name string) *ComponentHealth {
		if by[name] == nil {
			by[name] = &ComponentHealth{Name: name}
		}
		return by[name]
	}
	for i := range d.Components {
		c := d.Components[i]
		// A component has an event state per kind of Flux object
		// (Kustomization, OCIRepository): show its latest.
		if h := get(c.Name); h.Flux == nil || !c.UpdatedAt.Before(h.Flux.UpdatedAt) {
			h.Flux = &c
		}
	}
	for _, cs := range res.Check(probe.CheckSync).Components {
		if cs.Kind == "Kustomization" {
			h := get(cs.Component)
			h.Sync = append(h.Sync, cs)
		}
	}
	for _, cs := range res.Check(probe.CheckReadiness).Components {
		name := cs.Component
		if name == "" {
			name = strings.TrimPrefix(cs.Name, d.App.Name+"-")
		}
		h := get(name)
		h.Workloads = append(h.Workloads, cs)
	}
	out := make([]ComponentHealth, 0, len(by))
	for _, h := range by {
		h.Health, h.Message = worstHealth(h)
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b ComponentHealth) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// worstHealth judges a component: what the checks saw of its objects (the
// worst of them) when they saw any, else its latest Flux event. A failure
// reported by Flux counts either way.
func worstHealth(h *ComponentHealth) (string, string) {
	health, msg, rank := "unknown", "", 0
	set := func(r int, hl, m string) {
		if r > rank {
			rank, health, msg = r, hl, m
		}
	}
	seen := slices.Concat(h.Sync, h.Workloads)
	if f := h.Flux; f != nil {
		switch {
		case f.Health == store.HealthFailed:
			set(3, store.HealthFailed, f.Reason+": "+f.Message)
		case len(seen) > 0:
		case f.Health == store.HealthProgressing:
			set(2, store.HealthProgressing, f.Reason+": "+f.Message)
		default:
			set(1, store.HealthHealthy, f.Reason+": "+f.Message)
		}
	}
	for _, cs := range seen {
		switch cs.State {
		case probe.StateFailed:
			set(3, store.HealthFailed, cs.Kind+" "+cs.Name+": "+cs.Message)
		case probe.StatePassed, probe.StateSkipped:
			set(1, store.HealthHealthy, cs.Kind+" "+cs.Name+": "+cs.Message)
		default:
			set(2, store.HealthProgressing, cs.Kind+" "+cs.Name+": "+cs.Message)
		}
	}
	return health, msg
}

// DeploymentView is one deployment as the API shows it: the wire type,
// with its checks decoded.
type DeploymentView struct {
	api.Deployment
	Checks probe.Result `json:"checks"`
}

func deploymentView(d store.Deployment) DeploymentView {
	return DeploymentView{Deployment: wireDeployment(d), Checks: decodeResult(d)}
}

// wireDeployment is d as the API writes it, its checks aside.
func wireDeployment(d store.Deployment) api.Deployment {
	w := api.Deployment{
		ID: d.ID, Project: d.App.Project, App: d.App.Name, Environment: d.Environment, Revision: d.Revision, SpecRevision: d.SpecRevision,
		StartedAt: d.StartedAt, FinishedAt: d.FinishedAt, UpdatedAt: d.UpdatedAt, Phase: api.Phase(d.Phase), Message: d.Message, LiveURL: d.LiveURL,
	}
	if d.Components != nil {
		w.Components = make([]api.Component, len(d.Components))
		for i, c := range d.Components {
			w.Components[i] = api.Component(c)
		}
	}
	return w
}

const (
	defaultPageSize = 20
	maxPageSize     = api.MaxPageSize
)

func encodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("d" + strconv.FormatInt(id, 10)))
}

func decodeCursor(c string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil && len(b) > 1 && b[0] == 'd' {
		if n, err := strconv.ParseInt(string(b[1:]), 10, 64); err == nil && n > 0 {
			return n, nil
		}
	}
	return 0, errors.New("invalid cursor")
}

func (s *Server) handleDeployments(w http.ResponseWriter, r *http.Request) {
	if !s.granted(w, r) {
		return
	}
	app := appOfPath(r)
	env, ok := environmentParam(w, r)
	if !ok {
		return
	}
	limit := defaultPageSize
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit must be 1..%d", maxPageSize))
			return
		}
		limit = n
	}
	var before int64
	if c := r.URL.Query().Get("cursor"); c != "" {
		n, err := decodeCursor(c)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		before = n
	}
	// One more than asked tells whether a next page exists. An app's
	// current deployment in each environment is never pruned: a first
	// page without any is an app that never ran (there).
	var (
		ds  []store.Deployment
		err error
	)
	if env == "" {
		ds, err = s.cfg.Store.Deployments(r.Context(), app, limit+1, before)
	} else {
		ds, err = s.cfg.Store.DeploymentsIn(r.Context(), app, env, limit+1, before)
	}
	if err != nil {
		s.storeError(w, err)
		return
	}
	if len(ds) == 0 && before == 0 {
		writeError(w, http.StatusNotFound, s.noApp(r.Context(), app, env))
		return
	}
	next := ""
	if len(ds) > limit {
		ds = ds[:limit]
		next = encodeCursor(ds[len(ds)-1].ID)
	}
	views := make([]DeploymentView, 0, len(ds))
	for _, d := range ds {
		views = append(views, deploymentView(d))
	}
	writeJSON(w, http.StatusOK, map[string]any{"deployments": views, "next_cursor": next})
}

// DeployStatus is the answer of GET …/deploy-status: the three checks of
// the current deployment, in order.
type DeployStatus struct {
	layout.AppRef
	Environment  string        `json:"environment,omitempty"`
	DeploymentID int64         `json:"deployment_id"`
	Revision     string        `json:"revision"`
	Phase        store.Phase   `json:"phase"`
	Message      string        `json:"message,omitempty"`
	Checks       []probe.Check `json:"checks"`
	LiveURL      string        `json:"live_url,omitempty"`
}

func (s *Server) handleDeployStatus(w http.ResponseWriter, r *http.Request) {
	a, d, ok := s.appAndDeployment(w, r)
	if !ok {
		return
	}
	res := decodeResult(d)
	writeJSON(w, http.StatusOK, DeployStatus{
		AppRef: a.AppRef, Environment: a.Environment, DeploymentID: d.ID, Revision: d.Revision,
		Phase: d.Phase, Message: d.Message, Checks: res.Checks, LiveURL: d.LiveURL,
	})
}

// PodView is one pod of an app.
type PodView struct {
	Name      string    `json:"name"`
	Component string    `json:"component,omitempty"`
	Phase     string    `json:"phase"`
	Ready     string    `json:"ready"`
	Restarts  int32     `json:"restarts"`
	Node      string    `json:"node,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
	Images    []string  `json:"images"`
}

// kubeOf returns the Kubernetes client of the cluster the query's
// environment runs on (clusterOf), answering 503 when the webhook reads
// none there; env is the query's environment.
func (s *Server) kubeOf(w http.ResponseWriter, r *http.Request) (kube kubernetes.Interface, env string, ok bool) {
	env, ok = environmentParam(w, r)
	if !ok {
		return nil, "", false
	}
	cl, unread := s.clusterOf(env)
	switch {
	case unread != "":
		writeError(w, http.StatusServiceUnavailable, "environment "+env+" "+s.notRead(unread))
		return nil, "", false
	case cl.kube == nil:
		writeError(w, http.StatusServiceUnavailable, "no cluster configured")
		return nil, "", false
	}
	return cl.kube, env, true
}

// listPods lists the app's pods (of one component, when named) in
// namespace ns of a cluster.
func listPods(ctx context.Context, kube kubernetes.Interface, ns string, app layout.AppRef, component string) ([]corev1.Pod, error) {
	sel := appSelector(app)
	if component != "" {
		sel += ",fleetwright.io/component=" + component
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	pods := list.Items
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return cmp.Compare(a.Name, b.Name) })
	return pods, nil
}

func (s *Server) handlePods(w http.ResponseWriter, r *http.Request) {
	if !s.granted(w, r) {
		return
	}
	kube, env, ok := s.kubeOf(w, r)
	if !ok {
		return
	}
	app := appOfPath(r)
	pods, err := listPods(r.Context(), kube, appNamespace(app.Project, env), app, r.URL.Query().Get("component"))
	if err != nil {
		writeError(w, http.StatusBadGateway, "listing pods from the cluster: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"pods": podViews(pods)})
}

// podViews shows pods as the API and the app page list them.
func podViews(pods []corev1.Pod) []PodView {
	out := make([]PodView, 0, len(pods))
	for _, p := range pods {
		v := PodView{Name: p.Name, Component: p.Labels[layout.LabelComponent], Phase: string(p.Status.Phase), Node: p.Spec.NodeName, Images: []string{}}
		if p.Status.StartTime != nil {
			v.StartedAt = p.Status.StartTime.UTC()
		}
		ready := 0
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Ready {
				ready++
			}
			v.Restarts += cs.RestartCount
		}
		for _, c := range p.Spec.Containers {
			v.Images = append(v.Images, c.Image)
		}
		v.Ready = fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers))
		out = append(out, v)
	}
	return out
}

// EventView is one event about an app: from Kubernetes or from Flux.
type EventView struct {
	Source  string    `json:"source"`
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Object  string    `json:"object"`
	Message string    `json:"message"`
	Count   int32     `json:"count,omitempty"`
}

func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if !s.granted(w, r) {
		return
	}
	env, ok := environmentParam(w, r)
	if !ok {
		return
	}
	app := appOfPath(r)
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, "limit must be 1..1000")
			return
		}
		limit = n
	}
	stored, err := s.cfg.Store.Events(r.Context(), app, limit)
	if err != nil {
		s.storeError(w, err)
		return
	}
	out := make([]EventView, 0, len(stored))
	for _, e := range stored {
		out = append(out, EventView{Source: "flux", Time: e.EventTime, Type: e.Severity, Reason: e.Reason,
			Object: e.Kind + "/" + e.Namespace + "/" + e.Name, Message: e.Message})
	}
	// The Kubernetes events of the cluster the environment runs on, when
	// the webhook reads it.
	if cl, _ := s.clusterOf(env); cl != nil && cl.kube != nil {
		kev, err := kubeEvents(r.Context(), cl.kube, appNamespace(app.Project, env), app)
		if err != nil {
			writeError(w, http.StatusBadGateway, "listing events from the cluster: "+err.Error())
			return
		}
		out = append(out, kev...)
	}
	slices.SortStableFunc(out, func(a, b EventView) int { return b.Time.Compare(a.Time) })
	if len(out) > limit {
		out = out[:limit]
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": out})
}

// kubeEvents returns the Kubernetes events of the app's objects: those named
// <app>-<component> and the ReplicaSets and Pods named after them, in
// namespace ns.
func kubeEvents(ctx context.Context, kube kubernetes.Interface, ns string, app layout.AppRef) ([]EventView, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	deps, err := kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{
		LabelSelector: appSelector(app)})
	if err != nil {
		return nil, err
	}
	var prefixes []string
	for _, d := range deps.Items {
		prefixes = append(prefixes, d.Name)
	}
	list, err := kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []EventView
	for _, e := range list.Items {
		obj := e.InvolvedObject.Name
		if !slices.ContainsFunc(prefixes, func(p string) bool { return obj == p || strings.HasPrefix(obj, p+"-") }) {
			continue
		}
		t := e.LastTimestamp.Time
		if t.IsZero() {
			t = e.EventTime.Time
		}
		if t.IsZero() {
			t = e.CreationTimestamp.Time
		}
		out = append(out, EventView{Source: "kubernetes", Time: t.UTC(), Type: e.Type, Reason: e.Reason,
			Object: e.InvolvedObject.Kind + "/" + obj, Message: e.Message, Count: e.Count})
	}
	return out, nil
}

// PodLog is the log tail of one pod.
type PodLog struct {
	Pod       string `json:"pod"`
	Container string `json:"container"`
	Log       string `json:"log"`
}

const maxLogPods = 5

func (s *Server) handleLogs(w http.ResponseWriter, r *http.Request) {
	if !s.granted(w, r) {
		return
	}
	kube, env, ok := s.kubeOf(w, r)
	if !ok {
		return
	}
	app := appOfPath(r)
	q := r.URL.Query()
	component := q.Get("component")
	if component == "" {
		writeError(w, http.StatusBadRequest, "the component query parameter is required")
		return
	}
	tail := int64(200)
	if v := q.Get("tail"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 5000 {
			writeError(w, http.StatusBadRequest, "tail must be 1..5000")
			return
		}
		tail = n
	}
	pods, err := listPods(r.Context(), kube, appNamespace(app.Project, env), app, component)
	if err != nil {
		writeError(w, http.StatusBadGateway, "listing pods from the cluster: "+err.Error())
		return
	}
	if len(pods) == 0 {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no pods of component %s of %s", component, app.Ref()))
		return
	}
	var scheduled []corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			scheduled = append(scheduled, p)
		}
	}
	if len(scheduled) == 0 {
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("no pod of component %s of %s runs on a node yet: no logs to read", component, app.Ref()))
		return
	}
	out := []PodLog{}
	for _, p := range scheduled[:min(len(scheduled), maxLogPods)] {
		container := q.Get("container")
		if container == "" && len(p.Spec.Containers) > 0 {
			container = p.Spec.Containers[0].Name
		}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		raw, err := kube.CoreV1().Pods(appNamespace(app.Project, env)).GetLogs(p.Name, &corev1.PodLogOptions{Container: container, TailLines: &tail}).DoRaw(ctx)
		cancel()
		if err != nil {
			writeError(w, http.StatusBadGateway, fmt.Sprintf("logs of pod %s are not available from the cluster (is its node's kubelet reachable?): %v", p.Name, err))
			return
		}
		out = append(out, PodLog{Pod: p.Name, Container: container, Log: string(raw)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"logs": out})
}

// appSelector selects the objects of an app by the labels render writes.
func appSelector(app layout.AppRef) string {
	return layout.LabelApp + "=" + app.Name + "," + layout.LabelProject + "=" + app.Project
}

// noApp says that the app does not run in env: with env empty, and the
// app running in environments, which ones to name.
func (s *Server) noApp(ctx context.Context, app layout.AppRef, env string) string {
	if env != "" {
		return fmt.Sprintf("no app %s in environment %s", app.Ref(), env)
	}
	ds, err := s.cfg.Store.Deployments(ctx, app, 1, 0)
	if err != nil || len(ds) == 0 {
		return "no app " + app.Ref()
	}
	return fmt.Sprintf("no app %s outside environments: it runs in environment %s (name one with ?environment=)", app.Ref(), ds[0].Environment)
}

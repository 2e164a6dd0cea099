package verify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/secretscan"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// liveChecker runs the checks against a cluster.
type liveChecker struct {
	r       *run
	dyn     dynamic.Interface
	mapper  meta.RESTMapper
	manager string
	fleetNS map[string]bool // namespaces the fleet itself creates

	mu         sync.Mutex
	namespaces map[string]bool                                     // namespace → exists
	appliers   map[types.NamespacedName]*unstructured.Unstructured // Kustomizations read by handover; nil: none
}

// maxDriftFields bounds the fields reported per object.
const maxDriftFields = 20

// live server-side dry-runs every object and compares it with the cluster.
func (r *run) live(ctx context.Context) error {
	lv := r.opts.Live
	cfg := rest.CopyConfig(lv.Config)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	cfg.WarningHandler, cfg.WarningHandlerWithContext = nil, warningRouter{log: r.log}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("connecting to the cluster: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("connecting to the cluster: %w", err)
	}
	if _, err := dc.ServerVersion(); err != nil {
		return fmt.Errorf("connecting to the cluster: %w", err)
	}
	lc := &liveChecker{
		r: r, dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		manager: cmp.Or(lv.FieldManager, DefaultFieldManager), fleetNS: map[string]bool{}, namespaces: map[string]bool{},
	}
	objs := r.liveObjs
	slices.SortFunc(objs, func(a, b *object) int {
		return cmp.Or(strings.Compare(a.file, b.file), strings.Compare(a.kind, b.kind), strings.Compare(a.namespace, b.namespace), strings.Compare(a.name, b.name))
	})
	for _, o := range objs {
		if o.kind == "Namespace" && gvkOf(o.root).Group == "" {
			lc.fleetNS[o.name] = true
		}
	}
	r.log.Info("checking objects against the cluster", "objects", len(objs), "host", cfg.Host, "field-manager", lc.manager)
	workers := lv.Workers
	if workers <= 0 {
		workers = 8
	}
	parallel(ctx, len(objs), workers, func(i int) { r.findings.add(lc.check(ctx, objs[i])...) })
	r.stats.LiveObjects = len(objs)
	return ctx.Err()
}

func (lc *liveChecker) check(ctx context.Context, o *object) []Finding {
	r := lc.r
	f := func(check Check, sev Severity, field, format string, args ...any) Finding {
		return r.finding(o, check, sev, field, fmt.Sprintf(format, args...))
	}
	if o.name == "" || o.kind == "" {
		return nil // an API finding already
	}
	if o.root.Get("sops") != nil {
		return []Finding{f(CheckDryRun, SeverityInfo, "", "not dry-run: SOPS-encrypted, and only Flux holds the key")}
	}
	gvk := gvkOf(o.root)
	mapping, err := lc.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return []Finding{f(CheckDryRun, SeverityError, "", "the cluster serves no %s %s (is its CustomResourceDefinition installed?)", o.apiVersion, o.kind)}
		}
		return []Finding{f(CheckDryRun, SeverityError, "", "looking up %s %s: %v", o.apiVersion, o.kind, err)}
	}
	var res dynamic.ResourceInterface = lc.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := cmp.Or(o.namespace, metav1.NamespaceDefault)
		exists, err := lc.namespaceExists(ctx, ns)
		if err != nil {
			return []Finding{f(CheckDryRun, SeverityError, "", "reading namespace %s: %v", ns, err)}
		}
		if !exists {
			if lc.fleetNS[ns] {
				return []Finding{f(CheckDryRun, SeverityInfo, "", "not dry-run: namespace %s does not exist yet; the fleet creates it", ns)}
			}
			return []Finding{f(CheckDryRun, SeverityError, "metadata.namespace", "namespace %s does not exist in the cluster, and the fleet does not create it", ns)}
		}
		res = lc.dyn.Resource(mapping.Resource).Namespace(ns)
	}
	body := yamlx.AppendJSON(nil, o.root)
	opts := metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: lc.manager, Force: new(false)}
	dryCtx, warned := collectWarnings(ctx)
	result, err := res.Patch(dryCtx, o.name, types.ApplyPatchType, body, opts)
	blocked := map[string]string{} // field path → manager
	if err != nil && apierrors.IsConflict(err) {
		var status apierrors.APIStatus
		if errors.As(err, &status) && status.Status().Details != nil {
			for _, c := range status.Status().Details.Causes {
				if c.Type == metav1.CauseTypeFieldManagerConflict {
					blocked[c.Field] = managerOf(c.Message)
				}
			}
		}
		opts.Force = new(true)
		result, err = res.Patch(dryCtx, o.name, types.ApplyPatchType, body, opts)
	}
	warnings := lc.warningFindings(o, warned)
	if err != nil {
		return append(warnings, f(CheckDryRun, SeverityError, causeField(err), "the cluster rejects it: %s", serverMessage(err)))
	}
	current, err := res.Get(ctx, o.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return append(warnings, f(CheckLiveDrift, SeverityInfo, "", "not in the cluster yet; Flux creates it"))
	}
	if err != nil {
		return append(warnings, f(CheckLiveDrift, SeverityError, "", "reading it from the cluster: %v", err))
	}
	desired, observed := result.Object, current.Object
	blockedAt := resolveManaged(blocked, desired, observed)
	out := append(warnings, lc.handover(ctx, o, current)...)
	diffs := diffValues(desired, observed, "")
	for i, d := range diffs {
		if i == maxDriftFields {
			out = append(out, f(CheckLiveDrift, SeverityWarning, "", "and %d more differing fields", len(diffs)-i))
			break
		}
		want, got := showValue(o, d.path, d.desired), showValue(o, d.path, d.observed)
		ff := f(CheckLiveDrift, SeverityWarning, d.path, "desired %s, observed %s: %s (Flux's apply restores it)", want, got, ClassSafe)
		ff.Class = ClassSafe
		if manager, ok := blockedAt[d.path]; ok {
			ff.Severity, ff.Class = SeverityError, ClassBlocked
			ff.Message = fmt.Sprintf("desired %s, observed %s: %s: field manager %s owns it with another value, so an apply as %s conflicts",
				want, got, ClassBlocked, manager, lc.manager)
		}
		ff.Desired, ff.Observed = want, got
		out = append(out, ff)
	}
	return out
}

// kustomizationGVR is the resource of Flux's Kustomizations.
var kustomizationGVR = kustomizev1.GroupVersion.WithResource("kustomizations")

// appliedBy is the Kustomization that applied an object, by
// kustomize-controller's owner labels ("" names when it has none).
func appliedBy(labels map[string]string) types.NamespacedName {
	return types.NamespacedName{Namespace: labels[layout.AppliedByNamespaceLabel], Name: labels[layout.AppliedByNameLabel]}
}

// handover reports an object that the fleet gives to another Kustomization
// than the one that applied it in the cluster (kustomize-controller's owner
// labels) when Flux would delete it on the way: the Kustomization that
// applied it stays, applies the new commit without it and prunes it as no
// longer its own, whether or not the new one has applied it yet; and a
// Kustomization object deleted that way takes, through its finalizer, every
// workload it applied. Safe are an object marked
// kustomize.toolkit.fluxcd.io/prune: disabled (the first step of a move,
// docs/fleet.md), one whose previous Kustomization is gone or does not
// prune, and one whose previous Kustomization the new one applies (it
// applies the object before it prunes the old Kustomization).
func (lc *liveChecker) handover(ctx context.Context, o *object, current *unstructured.Unstructured) []Finding {
	if o.ks == nil || o.ks.name == "" {
		return nil
	}
	from := appliedBy(current.GetLabels())
	to := types.NamespacedName{Namespace: o.ks.namespace, Name: o.ks.name} // defaulted to the fleet's source namespace
	if from.Name == "" || from == to || current.GetAnnotations()[layout.PruneAnnotation] == layout.PruneDisabled {
		return nil
	}
	prev, err := lc.kustomization(ctx, from)
	if err != nil {
		return []Finding{lc.r.finding(o, CheckLiveHandover, SeverityWarning, "",
			fmt.Sprintf("applied by Kustomization %s, which could not be read to tell whether it prunes the object when this fleet gives it to %s: %v", from, to, err))}
	}
	if prev == nil || !pruning(prev) { // its garbage collection, on deletion too, obeys spec.prune
		return nil
	}
	if appliedBy(prev.GetLabels()) == to {
		return nil
	}
	msg := fmt.Sprintf("applied in the cluster by Kustomization %s, in this fleet by %s: once Flux has this commit, %s prunes it as no longer its own, "+
		"before or after %s applies it", from, to, from.Name, to.Name)
	if o.kind == "Kustomization" {
		msg += ", and deletes with it every object it applied"
	}
	msg += fmt.Sprintf("; have Flux apply it marked %s first (render writes that step when it moves an app's Flux objects), and merge this once %s is Ready at that commit",
		layout.PruneDisabledLine, from.Name)
	return []Finding{lc.r.finding(o, CheckLiveHandover, SeverityError, "metadata.labels", msg)}
}

// pruning reports whether a Kustomization prunes what it no longer applies.
func pruning(k *unstructured.Unstructured) bool {
	prune, _, _ := unstructured.NestedBool(k.Object, "spec", "prune")
	return prune
}

// kustomization reads a Kustomization once per run; nil when the cluster
// has none of that name.
func (lc *liveChecker) kustomization(ctx context.Context, key types.NamespacedName) (*unstructured.Unstructured, error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if k, ok := lc.appliers[key]; ok {
		return k, nil
	}
	k, err := lc.dyn.Resource(kustomizationGVR).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		k = nil
	case err != nil:
		return nil, err
	}
	if lc.appliers == nil {
		lc.appliers = map[types.NamespacedName]*unstructured.Unstructured{}
	}
	lc.appliers[key] = k
	return k, nil
}

func (lc *liveChecker) namespaceExists(ctx context.Context, ns string) (bool, error) {
	lc.mu.Lock()
	exists, ok := lc.namespaces[ns]
	lc.mu.Unlock()
	if ok {
		return exists, nil
	}
	_, err := lc.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(ctx, ns, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		exists = false
	case err != nil:
		return false, err
	default:
		exists = true
	}
	lc.mu.Lock()
	lc.namespaces[ns] = exists
	lc.mu.Unlock()
	return exists, nil
}

// managerOf returns the quoted field manager of a conflict message such as
// `conflict with "kubectl-edit" using apps/v1`.
func managerOf(msg string) string {
	if i := strings.IndexByte(msg, '"'); i >= 0 {
		if j := strings.IndexByte(msg[i+1:], '"'); j >= 0 {
			return msg[i : i+j+2]
		}
	}
	return strconv.Quote(msg)
}

// causeField returns the field the API server's first cause names, in this
// package's path form, or "".
func causeField(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return ""
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field != "" {
			return strings.TrimPrefix(c.Field, ".")
		}
	}
	return ""
}

// serverMessage is the API server's message for a failed request.
func serverMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}

type valueDiff struct {
	path              string
	desired, observed any // nil when absent
}

// ignoredPaths are the fields the cluster owns.
var ignoredPaths = map[string]bool{
	"status": true, "metadata.managedFields": true, "metadata.resourceVersion": true, "metadata.generation": true,
	"metadata.uid": true, "metadata.creationTimestamp": true, "metadata.selfLink": true,
}

// diffValues lists the leaves where the object after Flux's apply
// (desired) and the cluster's object (observed) differ.
func diffValues(desired, observed any, path string) []valueDiff {
	if ignoredPaths[path] {
		return nil
	}
	switch d := desired.(type) {
	case map[string]any:
		o, ok := observed.(map[string]any)
		if !ok {
			break
		}
		var out []valueDiff
		keys := slices.Sorted(maps.Keys(d))
		for k := range o {
			if _, ok := d[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		for _, k := range keys {
			out = append(out, diffValues(d[k], o[k], joinPath(path, k))...)
		}
		return out
	case []any:
		o, ok := observed.([]any)
		if !ok || len(o) != len(d) {
			break
		}
		var out []valueDiff
		for i := range d {
			out = append(out, diffValues(d[i], o[i], path+"["+strconv.Itoa(i)+"]")...)
		}
		return out
	}
	if equalJSON(desired, observed) {
		return nil
	}
	return []valueDiff{{path: path, desired: desired, observed: observed}}
}

func joinPath(p, k string) string {
	if p == "" {
		return k
	}
	return p + "." + k
}

func equalJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// resolveManaged turns server-side apply field paths, such as
// .spec.template.spec.containers[name="api"].image, into this package's
// paths (spec.template.spec.containers[0].image), by looking the list keys
// up in the objects.
func resolveManaged(fields map[string]string, objs ...map[string]any) map[string]string {
	out := map[string]string{}
	for field, manager := range fields {
		for _, obj := range objs {
			if p, ok := resolveFieldPath(field, obj); ok {
				out[p] = manager
			}
		}
	}
	return out
}

func resolveFieldPath(field string, obj any) (string, bool) {
	p := ""
	cur := obj
	for s := field; s != ""; {
		switch s[0] {
		case '.':
			end := strings.IndexAny(s[1:], ".[")
			name := s[1:]
			if end >= 0 {
				name, s = s[1:end+1], s[end+1:]
			} else {
				s = ""
			}
			m, _ := cur.(map[string]any)
			cur = m[name]
			p = joinPath(p, name)
		case '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return "", false
			}
			sel := s[1:end]
			s = s[end+1:]
			list, ok := cur.([]any)
			if !ok {
				return "", false
			}
			i := findItem(list, sel)
			if i < 0 {
				return "", false
			}
			cur = list[i]
			p += "[" + strconv.Itoa(i) + "]"
		default:
			return "", false
		}
	}
	return p, true
}

// findItem returns the index of the list item a selector names:
// [name="api"], [containerPort=80,protocol="TCP"], [="value"] or [3].
func findItem(list []any, sel string) int {
	if i, err := strconv.Atoi(sel); err == nil {
		return i
	}
	if v, ok := strings.CutPrefix(sel, "="); ok {
		for i, item := range list {
			if b, err := json.Marshal(item); err == nil && string(b) == v {
				return i
			}
		}
		return -1
	}
	want := map[string]string{}
	for _, kv := range strings.Split(sel, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return -1
		}
		want[k] = v
	}
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		match := true
		for k, v := range want {
			b, err := json.Marshal(m[k])
			if err != nil || string(b) != v {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

// showValue formats a value for a drift finding; secret values are masked.
func showValue(o *object, path string, v any) string {
	if v == nil {
		return "<absent>"
	}
	if o.kind == "Secret" || secretField(o, path) {
		return "<hidden>"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "<unprintable>"
	}
	s := string(b)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// secretField reports whether a path is the value of an env var whose name
// looks like a credential.
func secretField(o *object, path string) bool {
	i := strings.LastIndex(path, ".env[")
	if i < 0 {
		return false
	}
	item, _ := o.root.Path(path[:strings.IndexByte(path[i+1:], ']')+i+2])
	return item == nil || secretscan.IsCredentialName(item.Get("name").Text())
}

package verify

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/tenancy"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// The tenancy checks (docs/tenancy.md), with the rules of package tenancy
// that render validate applies to the specs: in a component's folder,
// apps/<cluster>/<project>/<app>/<component>/, every object lives in the
// project's namespace, none is cluster-scoped, RBAC, a Namespace, or a Flux
// or Helm object other than the HelmRelease and HelmRepository render
// writes for an addon; what the folder's patches make of its objects keeps
// to the rules (same objects, Pod Security, hosts, size); the apps'
// Ingress hosts do not overlap; charts come from allowed repositories.

// Tenancy checks.
const (
	CheckTenancy         Check = "tenancy"          // an object reaches beyond its project
	CheckChartRepository Check = "chart-repository" // a chart from a repository the policy does not allow
)

// tenantOf returns the project and app of a fleet file in a component's
// folder, apps/<cluster>/<project>/<app>/<component>/ (the folders
// layout.ComponentDirOf names); ok is false for any other file. It
// allocates nothing: every object of the fleet passes here.
//
// A preview's component folders, previews/<cluster>/pr-<N>/apps/…, are
// their project's preview namespace's (<project>-pr<N>).
func tenantOf(file string) (app layout.AppRef, ok bool) {
	l := layout.Parse(file)
	if l.Project == "" || l.App == "" || l.Component == "" || l.Rest == "" {
		return layout.AppRef{}, false
	}
	return layout.AppRef{Project: l.Project, Name: l.App}, true
}

// rendersInComponents are the Flux kinds render itself writes in a
// component's folder (an addon's), by group/kind.
var rendersInComponents = map[string]bool{
	"helm.toolkit.fluxcd.io/HelmRelease": true, "source.toolkit.fluxcd.io/HelmRepository": true,
}

// checkTenancy checks one object of a component's folder: its kind, its
// namespace, the namespaces a HelmRelease reaches, and a HelmRepository's
// URL.
func (r *run) checkTenancy(o *object) []Finding {
	gvk := gvkOf(o.root)
	var out []Finding
	if gvk.Group == "source.toolkit.fluxcd.io" && gvk.Kind == "HelmRepository" {
		if url := o.root.Get("spec").Get("url").Text(); url != "" {
			var allowed []string
			if r.plat.Policy != nil {
				allowed = r.plat.Policy.ChartRepositories
			}
			if m := tenancy.ChartRepositoryProblem(url, allowed, len(allowed) > 0); m != "" {
				out = append(out, r.finding(o, CheckChartRepository, SeverityError, "spec.url", m))
			}
		}
	}
	app, ok := tenantOf(o.file)
	project := app.Project
	if !ok || o.kind == "" || o.ks == nil {
		return out // not in a component's folder, or not applied (another check says so)
	}
	if m := tenancy.ForbiddenKind(gvk.Group, gvk.Kind); m != "" && !rendersInComponents[gvk.Group+"/"+gvk.Kind] {
		return append(out, r.finding(o, CheckTenancy, SeverityError, "kind",
			fmt.Sprintf("%s in project %s's component folder: %s", o.kind, project, m)))
	}
	if o.namespace != "" && o.namespace != project {
		out = append(out, r.finding(o, CheckTenancy, SeverityError, "metadata.namespace",
			fmt.Sprintf("is in namespace %q; an object of project %s's folder must be in the project's namespace %q", o.namespace, project, project)))
	}
	if gvk.Group == "helm.toolkit.fluxcd.io" {
		sp := o.root.Get("spec")
		for _, f := range []string{"targetNamespace", "storageNamespace", "chart.spec.sourceRef.namespace", "chartRef.namespace"} {
			n, _ := sp.Path(f)
			if ns := n.Text(); ns != "" && ns != project {
				out = append(out, r.finding(o, CheckTenancy, SeverityError, "spec."+f,
					fmt.Sprintf("reaches namespace %q; a HelmRelease of project %s may reach only the project's namespace", ns, project)))
			}
		}
		if n := sp.Get("kubeConfig"); n != nil {
			out = append(out, r.finding(o, CheckTenancy, SeverityError, "spec.kubeConfig",
				"a HelmRelease of a project may not name a kubeConfig: it would install with another cluster's or identity's rights"))
		}
	}
	return out
}

// hostRecord is an Ingress host of an app's component folder, for the
// check across apps.
type hostRecord struct {
	cluster, app, host string
	patched            bool    // a patch set it
	f                  Finding // where it is, with no message yet
}

// recordHosts notes the Ingress hosts of an object of a component's folder.
func (r *run) recordHosts(o *object) {
	gvk := gvkOf(o.root)
	if gvk.Group != "networking.k8s.io" || gvk.Kind != "Ingress" {
		return
	}
	app := layout.AppOf(o.file)
	if app == "" {
		return
	}
	var recs []hostRecord
	rules := o.root.Get("spec").Get("rules")
	if rules == nil || rules.Kind != yamlx.SeqNode {
		return
	}
	for i, rule := range rules.Kids {
		if h := rule.Get("host").Text(); h != "" {
			field := fmt.Sprintf("spec.rules[%d].host", i)
			_, patched := o.patchAt(field)
			recs = append(recs, hostRecord{cluster: strings.Split(app, "/")[0], app: app, host: h, patched: patched,
				f: r.finding(o, CheckTenancy, SeverityError, field, "")})
		}
	}
	r.mu.Lock()
	r.hosts = append(r.hosts, recs...)
	r.mu.Unlock()
}

// hostOverlaps reports Ingress hosts that two apps of a cluster claim: the
// same host, or one under another's wildcard (which claims every name
// under it). The later claim (by file and line) is reported; of a wildcard
// and a host under it, the wildcard; of a host a patch set and one a file
// holds, the patched one.
func (r *run) hostOverlaps() {
	recs := slices.Clone(r.hosts)
	slices.SortFunc(recs, func(a, b hostRecord) int {
		if a.patched != b.patched {
			if a.patched {
				return 1
			}
			return -1
		}
		aw, bw := strings.HasPrefix(a.host, "*."), strings.HasPrefix(b.host, "*.")
		if aw != bw {
			if aw {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.f.File, b.f.File), cmp.Compare(a.f.Line, b.f.Line), cmp.Compare(a.host, b.host))
	})
	reg := map[string]*tenancy.Hosts{}
	where := map[string]string{} // cluster/app → the file and line of its first claim
	for _, h := range recs {
		hs := reg[h.cluster]
		if hs == nil {
			hs = &tenancy.Hosts{}
			reg[h.cluster] = hs
		}
		if claim, other := hs.Overlap(h.host, h.app); other != "" {
			f := h.f
			by := fmt.Sprintf("app %s (%s)", other, where[h.cluster+"/"+other])
			switch {
			case claim == h.host:
				f.Message = fmt.Sprintf("host %q is claimed by %s", h.host, by)
			case strings.HasPrefix(claim, "*."):
				f.Message = fmt.Sprintf("host %q is under the wildcard %q of %s", h.host, claim, by)
			default:
				f.Message = fmt.Sprintf("the wildcard host %q covers %q of %s", h.host, claim, by)
			}
			f.Message += "; two apps may not serve one host, and a wildcard host claims every name under it"
			r.findings.add(f)
			continue
		}
		hs.Claim(h.host, h.app)
		if k := h.cluster + "/" + h.app; where[k] == "" {
			where[k] = fmt.Sprintf("%s:%d", h.f.File, h.f.Line)
		}
	}
}

// decoded returns an object as a map.
func decoded(n *node) tenancy.Object {
	var m tenancy.Object
	_ = json.Unmarshal(yamlx.AppendJSON(nil, n), &m)
	return m
}

// componentKustomizationFields are what render writes in a component
// folder's kustomization.yaml. Anything else (patchesJson6902,
// replacements, components, generators, resources outside the folder…)
// would let a hand-edited fleet build what the patch rules and bounds
// never see.
var componentKustomizationFields = map[string]bool{"apiVersion": true, "kind": true, "resources": true, "patches": true}

// budgetKustomizations bounds, before any build, the patches of every
// kustomization file of the fleet (patches, patchesJson6902,
// patchesStrategicMerge; each replacement's target counted as a copy)
// with the tenancy bounds. A file whose patches break them is reported at
// the patch and refused to every build that reads it: kustomize would
// exhaust memory applying them.
func (r *run) budgetKustomizations() {
	for _, p := range r.t.paths {
		if !slices.Contains(konfig.RecognizedKustomizationFileNames(), path.Base(p)) {
			continue
		}
		data := r.t.files[p]
		if !bytes.Contains(data, []byte("patch")) && !bytes.Contains(data, []byte("replacements")) {
			continue
		}
		if f, ok := r.budgetKustomization(p); !ok {
			r.findings.add(f)
			r.refused[p] = true
		}
	}
}

// budgetKustomization bounds the patches of one kustomization file.
func (r *run) budgetKustomization(kfile string) (Finding, bool) {
	docs, err := yamlx.Parse(r.t.files[kfile])
	if err != nil || len(docs) == 0 || docs[0].Root == nil || docs[0].Root.Kind != yamlx.MapNode {
		return Finding{}, true // the build reports it
	}
	dir := path.Dir(kfile)
	k := docs[0].Root
	largest := 0
	for _, p := range r.t.under(dir) {
		if !isYAML(p) || p == kfile {
			continue
		}
		if ds, err := yamlx.Parse(r.t.files[p]); err == nil {
			for _, d := range ds {
				if d.Root != nil {
					largest = max(largest, len(yamlx.AppendJSON(nil, d.Root)))
				}
			}
		}
	}
	b := tenancy.NewBudget(largest)
	refuse := func(at *node, format string, args ...any) (Finding, bool) {
		return Finding{Check: CheckTenancy, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(kfile), Line: int(at.Line), Column: int(at.Col),
			Message: fmt.Sprintf(format, args...) + "; not built"}}, false
	}
	// text returns a patch's text: inline, or the file it names.
	text := func(item *node) ([]byte, *node) {
		if t := item.Get("patch"); t != nil {
			return []byte(t.Text()), t
		}
		if f := item.Get("path"); f != nil {
			return r.t.files[path.Join(dir, f.Text())], f
		}
		if item.Kind == yamlx.ScalarNode { // patchesStrategicMerge: a file or the patch itself
			if b, ok := r.t.files[path.Join(dir, item.Text())]; ok {
				return b, item
			}
			return []byte(item.Text()), item
		}
		return nil, item
	}
	for _, field := range []string{"patches", "patchesJson6902", "patchesStrategicMerge"} {
		for _, item := range items(k.Get(field)) {
			t, at := text(item)
			pd, err := yamlx.Parse(bytes.TrimSpace(t))
			if err != nil || len(pd) == 0 || pd[0].Root == nil {
				if len(bytes.TrimSpace(t)) == 0 {
					continue // kustomize reports it
				}
				return refuse(at, "the patch does not parse as YAML, so its size cannot be bounded")
			}
			var v any
			if err := json.Unmarshal(yamlx.AppendJSON(nil, pd[0].Root), &v); err != nil {
				return refuse(at, "the patch does not decode, so its size cannot be bounded")
			}
			if op, m := b.Add(len(t), v); m != "" {
				if op > 0 {
					return refuse(at, "operation %d %s", op, m)
				}
				return refuse(at, "the patch %s", m)
			}
		}
	}
	for _, item := range items(k.Get("replacements")) {
		n := max(1, len(items(item.Get("targets"))))
		copies := make([]any, n)
		for i := range copies {
			copies[i] = map[string]any{"op": "copy", "from": "/", "path": "/"}
		}
		if _, m := b.Add(0, copies); m != "" {
			return refuse(item, "this replacement copies into %d target(s), and with the patches before it %s", n, m)
		}
	}
	return Finding{}, true
}

// componentKustomization reports, in a component's folder, a
// kustomization.yaml with more than render writes there: fields other
// than resources and patches, a resource that is not a file of the folder,
// a patch read from a file. The build goes on (kustomize's and the other
// checks judge what it makes; budgetKustomizations bounds every patch
// first); it returns false when it reported one.
func (r *run) componentKustomization(dir string) bool {
	if _, ok := tenantOf(path.Join(dir, "x")); !ok {
		return true
	}
	kfile := path.Join(dir, "kustomization.yaml")
	docs, err := yamlx.Parse(r.t.files[kfile])
	if err != nil || len(docs) != 1 || docs[0].Root == nil || docs[0].Root.Kind != yamlx.MapNode {
		return true // kustomize reports it
	}
	k := docs[0].Root
	refuse := func(n *node, format string, args ...any) bool {
		r.findings.add(Finding{Check: CheckTenancy, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(kfile), Line: int(n.Line), Column: int(n.Col),
			Message: fmt.Sprintf(format, args...)}})
		return false
	}
	for i := 0; i < len(k.Kids); i += 2 {
		if key := k.Kids[i]; !componentKustomizationFields[key.Str] {
			return refuse(key, "%s in a component folder's kustomization.yaml: it may hold only resources (the folder's own files) and patches, as render writes it", key.Str)
		}
	}
	for _, res := range items(k.Get("resources")) {
		if name := res.Text(); res.Kind != yamlx.ScalarNode || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") || name == "" {
			return refuse(res, "resource %q is not a file of the component's folder", name)
		}
	}
	for _, item := range items(k.Get("patches")) {
		if f := item.Get("path"); f != nil {
			return refuse(f, "a patch read from a file (path %q): a component's patches are written inline, as render writes them", f.Text())
		}
		if item.Get("patch") == nil {
			return refuse(item, "a patch without patch text")
		}
	}
	return true
}

// patchBudget checks the patches of a folder's kustomization.yaml and of
// the Flux Kustomization that builds it against the tenancy bounds, before
// kustomize runs them; it reports false (and a finding at the patch) when
// one breaks them.
func (r *run) patchBudget(ks *fluxKS, dir string, refs []patchRef) bool {
	largest := 0
	for _, p := range r.t.under(dir) {
		if !isYAML(p) {
			continue
		}
		docs, err := yamlx.Parse(r.t.files[p])
		if err != nil {
			continue
		}
		for _, d := range docs {
			if d.Root != nil {
				largest = max(largest, len(yamlx.AppendJSON(nil, d.Root)))
			}
		}
	}
	b := tenancy.NewBudget(largest)
	type patch struct {
		root      *node
		file      string
		line, col int
		size      int
	}
	var all []patch
	for _, p := range refs {
		if p.root == nil {
			// What verify cannot read, it cannot bound.
			r.findings.add(Finding{Check: CheckTenancy, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(p.file), Line: p.line, Column: p.col,
				Message: "the patch does not parse as YAML, so its size cannot be bounded; not built"}})
			return false
		}
		all = append(all, patch{p.root, p.file, p.line, p.col, len(yamlx.AppendJSON(nil, p.root))})
	}
	if items := ks.spec.Get("patches"); items != nil && items.Kind == yamlx.SeqNode {
		for _, item := range items.Kids {
			text := item.Get("patch")
			if text == nil {
				continue
			}
			pd, err := yamlx.Parse([]byte(text.Text()))
			if err != nil || len(pd) == 0 || pd[0].Root == nil {
				r.findings.add(Finding{Check: CheckTenancy, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(ks.file), Line: int(text.Line), Column: int(text.Col),
					Message: "the patch does not parse as YAML, so its size cannot be bounded; not built"}})
				return false
			}
			all = append(all, patch{pd[0].Root, ks.file, int(text.Line), int(text.Col), len(text.Text())})
		}
	}
	for _, p := range all {
		var v any
		if err := json.Unmarshal(yamlx.AppendJSON(nil, p.root), &v); err != nil {
			r.findings.add(Finding{Check: CheckTenancy, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(p.file), Line: p.line, Column: p.col,
				Message: "the patch does not decode, so its size cannot be bounded; not built"}})
			return false
		}
		if op, m := b.Add(p.size, v); m != "" {
			if op > 0 {
				m = fmt.Sprintf("operation %d %s", op, m)
			} else {
				m = "the patch " + m
			}
			r.findings.add(Finding{Check: CheckTenancy, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(p.file), Line: p.line, Column: p.col,
				Message: m + "; not built"}})
			return false
		}
	}
	return true
}

// checkPatched compares what a component folder's patches made of its
// objects (objs, as built) with the objects the folder builds to without
// them, with the tenancy rules.
func (r *run) checkPatched(ks *fluxKS, dir, root string, only map[string]bool, objs []*object, refs []patchRef) {
	app, ok := tenantOf(path.Join(dir, "x"))
	if !ok {
		return
	}
	plain, _, err := r.kustomizeWith(ks, dir, root, only, true)
	if err != nil {
		return // the patched build's findings say why
	}
	before := make([]tenancy.Object, 0, len(plain))
	own := map[string]bool{}
	for _, o := range plain {
		m := decoded(o.root)
		before = append(before, m)
		if gvk := gvkOf(o.root); gvk.Group == "networking.k8s.io" && gvk.Kind == "Ingress" {
			for _, rule := range items(o.root.Get("spec").Get("rules")) {
				own[strings.ToLower(rule.Get("host").Text())] = true
			}
			for _, t := range items(o.root.Get("spec").Get("tls")) {
				for _, h := range items(t.Get("hosts")) {
					own[strings.ToLower(h.Text())] = true
				}
			}
		}
	}
	after := make([]tenancy.Object, 0, len(objs))
	byLabel := map[string]*object{}
	for _, o := range objs {
		after = append(after, decoded(o.root))
		byLabel[o.label()] = o
	}
	t := tenancy.Tenant{App: app, PodSecurity: r.plat.PodSecurityFor(app.Project), Hosts: func(h string) (bool, string) {
		return own[strings.ToLower(h)], ""
	}}
	for _, p := range tenancy.CheckPatched(before, after, t) {
		msg := p.Message
		if p.Path == "" || p.Path == "kind" || p.Path == "metadata.name" || p.Path == "metadata.namespace" {
			msg = p.Object + ": " + msg
		}
		if o := byLabel[p.Object]; o != nil && len(o.patches) > 0 {
			r.findings.add(r.finding(o, CheckTenancy, SeverityError, p.Path, msg))
			continue
		}
		f := Finding{Check: CheckTenancy, Diagnostic: diag.Diagnostic{Severity: SeverityError, Object: p.Object, Path: p.Path, Message: msg}}
		if len(refs) > 0 {
			f.File, f.Line, f.Column = r.display(refs[0].file), refs[0].line, refs[0].col
		} else {
			f.File, f.Line = r.display(ks.file), ks.line
		}
		r.findings.add(f)
	}
}

package verify

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/policy"
	"github.com/fleetwright/fleetwright/internal/tenancy"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// checkObject runs the checks of one object and records what the checks
// across objects need.
func (r *run) checkObject(o *object) {
	r.locateInList(o)
	var out []Finding
	out = append(out, r.checkAPI(o)...)
	out = append(out, r.checkSecrets(o)...)
	out = append(out, r.checkPolicy(o)...)
	out = append(out, r.checkIngressHosts(o)...)
	out = append(out, r.checkTenancy(o)...)
	for _, c := range containers(o.root, gvkOf(o.root)) {
		out = append(out, r.envRefFindings(o, c)...)
	}
	r.findings.add(out...)
	r.recordPodSecurity(o)
	r.recordHosts(o)

	gvk := gvkOf(o.root)
	line, _ := o.pos("")
	ns := o.namespace
	if tenancy.ClusterScoped(gvk.Group, gvk.Kind) {
		ns = "" // one object of its name in the cluster, whatever namespace a file gives it
	}
	reg := registration{key: objectKey{o.cluster, gvk.Group, gvk.Kind, ns, o.name}, file: o.file, line: line}
	if reg.file == "" && o.ks != nil {
		// An object no file holds (a patch changed its kind or name): the
		// Kustomization that applies it.
		reg.file, reg.line = o.ks.file, o.ks.line
	}
	if o.ks != nil {
		reg.by = "Kustomization " + o.ks.key()
	}
	cand, target := r.replicaInfo(o, gvk)
	r.mu.Lock()
	r.stats.Objects++
	r.registered = append(r.registered, reg)
	if cand != nil {
		r.replicas = append(r.replicas, *cand)
	}
	if target != ([2]string{}) {
		r.scalers[target] = true
	}
	if r.opts.Live != nil {
		r.liveObjs = append(r.liveObjs, o)
	}
	r.mu.Unlock()
}

type registration struct {
	key  objectKey
	by   string // the Kustomization that applies it, or ""
	file string
	line int
}

// duplicates reports objects that two Kustomizations (or two files) define:
// Flux would apply each over the other.
func (r *run) duplicates() {
	byKey := make(map[objectKey][]registration, len(r.registered))
	var dups []objectKey
	for _, reg := range r.registered {
		if reg.key.name == "" {
			continue
		}
		prev := byKey[reg.key]
		if len(prev) == 1 {
			dups = append(dups, reg.key)
		}
		byKey[reg.key] = append(prev, reg)
	}
	for _, key := range dups {
		regs := byKey[key]
		slices.SortFunc(regs, func(a, b registration) int {
			return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.line, b.line), cmp.Compare(a.by, b.by))
		})
		first := regs[0]
		where := r.display(first.file) + ":" + fmt.Sprint(first.line)
		if first.by != "" {
			where += " (" + first.by + ")"
		}
		id := key.kind + " " + key.name
		if key.namespace != "" {
			id = key.kind + " " + key.namespace + "/" + key.name
		}
		for _, b := range regs[1:] {
			if b == first {
				continue
			}
			r.findings.add(Finding{
				Check: CheckDuplicate, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(b.file), Line: b.line,
					Object: key.kind + "/" + key.name, Message: fmt.Sprintf("%s is also defined at %s", id, where)},
			})
		}
	}
}

// uncovered checks the objects of the YAML files that no Flux path builds,
// such as the cluster files holding the Flux Kustomizations.
func (r *run) uncovered(ctx context.Context) {
	var files []string
	for _, p := range r.t.paths {
		if isYAML(p) && !r.covered[p] {
			files = append(files, p)
		}
	}
	parallel(ctx, len(files), r.workers, func(i int) {
		p := files[i]
		if slices.Contains(konfig.RecognizedKustomizationFileNames(), path.Base(p)) {
			r.findings.add(Finding{
				Check: CheckBuild, Diagnostic: diag.Diagnostic{Severity: SeverityWarning, File: r.display(p), Line: 1,
					Message: "no Flux Kustomization builds this folder"},
			})
			return
		}
		docs, ok := r.parse(p)
		if !ok {
			return
		}
		cluster := r.clusterOf(p)
		for _, d := range docs {
			n := d.Root
			if n == nil || isKustomizeConfig(n) {
				continue
			}
			if n.Kind != yamlx.MapNode {
				r.findings.add(Finding{Check: CheckAPI, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(p), Line: d.Line, Message: "a document must be a mapping (an object)"}})
				continue
			}
			if n.Get("apiVersion") == nil && n.Get("kind") == nil {
				continue // not a Kubernetes object (tool configuration and the like)
			}
			r.checkObject(newObject(n, n, p, nil, cluster))
		}
	})
	r.duplicates()
}

// finding returns a finding about an object at a field.
func (r *run) finding(o *object, check Check, sev Severity, field, msg string) Finding {
	f := Finding{Check: check, Diagnostic: diag.Diagnostic{Severity: sev, Object: o.label(), Path: field, Message: msg}}
	switch {
	case o.file != "":
		f.File = r.display(o.file)
		f.Line, f.Column = o.pos(field)
		if p, ok := o.patchAt(field); ok {
			f.File, f.Line, f.Column = r.display(p.file), p.line, p.col
			f.Message += " (after this patch)"
		}
	case o.ks != nil:
		f.File, f.Line = r.display(o.ks.file), o.ks.line
	}
	return f
}

// pos returns the position of a field, or of its nearest parent that the
// source document has.
func (o *object) pos(field string) (int, int) {
	for _, n := range []*node{o.src, o.root} {
		if n == nil {
			continue
		}
		p := field
		for {
			val, key := n.Path(p)
			if key != nil {
				return int(key.Line), int(key.Col)
			}
			if val != nil {
				return int(val.Line), int(val.Col)
			}
			if p == "" {
				break
			}
			p = parentPath(p)
		}
	}
	return 0, 0
}

// parentPath drops the last step of a field path.
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

type replicaCandidate struct {
	finding   Finding
	namespace string
	name      string
	kind      string
}

// replicaInfo returns a workload of a production cluster that runs fewer
// than two replicas (the check waits for the HPAs), or the target of an HPA.
func (r *run) replicaInfo(o *object, gvk schema.GroupVersionKind) (*replicaCandidate, [2]string) {
	switch {
	case gvk.Group == "autoscaling" && gvk.Kind == "HorizontalPodAutoscaler":
		ref := o.root.Get("spec").Get("scaleTargetRef")
		return nil, [2]string{o.namespace, ref.Get("kind").Text() + "/" + ref.Get("name").Text()}
	case gvk.Group != "apps" || gvk.Kind != "Deployment" && gvk.Kind != "StatefulSet":
		return nil, [2]string{}
	}
	sev := r.policy.ProductionReplicas
	if sev == SeverityOff || !r.production(o.cluster) {
		return nil, [2]string{}
	}
	if o.root.Get("metadata").Get("annotations").Get(pausedAnnotation) != nil {
		return nil, [2]string{} // a paused app runs no replicas on purpose
	}
	replicas := int64(1)
	field := "spec.replicas"
	if v := o.root.Get("spec").Get("replicas"); v != nil && v.Tag == yamlx.IntTag {
		fmt.Sscan(v.Str, &replicas)
	} else {
		field = "spec"
	}
	// Whether an autoscaler scales it is known once every object is read
	// (productionReplicas).
	msg := policy.FewReplicas(replicas, o.cluster, false, false)
	if msg == "" {
		return nil, [2]string{}
	}
	f := r.finding(o, CheckProductionReplicas, sev, field, msg)
	return &replicaCandidate{finding: f, namespace: o.namespace, name: o.name, kind: gvk.Kind}, [2]string{}
}

// productionReplicas reports the production workloads with fewer than two
// replicas that no HorizontalPodAutoscaler scales.
func (r *run) productionReplicas() {
	for _, c := range r.replicas {
		if !r.scalers[[2]string{c.namespace, c.kind + "/" + c.name}] {
			r.findings.add(c.finding)
		}
	}
}

package validate

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

var (
	qualifiedName = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	labelValue    = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
)

// labelKeyProblem says why k is not a label or annotation key, or "".
func labelKeyProblem(k string) string {
	prefix, name, ok := strings.Cut(k, "/")
	if !ok {
		name, prefix = prefix, ""
	}
	switch {
	case ok && (prefix == "" || !load.IsSubdomain(prefix)):
		return fmt.Sprintf("%q has a prefix that is not a DNS subdomain", k)
	case len(name) > 63 || !qualifiedName.MatchString(name):
		return fmt.Sprintf("%q is not a valid key: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, after an optional DNS prefix and /", k)
	}
	return ""
}

// checkPod checks the pod settings.
func checkPod(doc *load.Document, p *spec.Pod, at load.Path, ps *load.Problems) {
	if p == nil {
		return
	}
	for _, set := range []struct {
		field  string
		m      map[string]string
		values bool
	}{{"labels", p.Labels, true}, {"node_selector", p.NodeSelector, true}, {"annotations", p.Annotations, false}} {
		for _, k := range sortedKeys(set.m) {
			ka := at.Child(set.field).Child(k)
			switch {
			case set.field == "labels" && layout.ReservedLabel(k):
				// generate keeps its own: the pods are selected and
				// tracked by them.
				ps.WarnKey(doc, ka, "%s is fleetwright's own label, which selects and tracks the pods; this value is ignored: choose another key", k)
			case set.field == "annotations" && layout.ReservedLabel(k):
				ps.WarnKey(doc, ka, "%s is in fleetwright's own prefix, whose annotations it sets itself; choose another key", k)
			case labelKeyProblem(k) != "":
				ps.AddKey(doc, ka, "%s", labelKeyProblem(k))
			case set.values && (len(set.m[k]) > 63 || !labelValue.MatchString(set.m[k])):
				ps.Add(doc, ka, "%q is not a valid label value: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit", set.m[k])
			}
		}
	}
	for i, t := range p.Tolerations {
		ta := at.Child("tolerations").Child(i)
		switch {
		case t.Operator == "Exists" && t.Value != "":
			ps.Add(doc, ta.Child("value"), "operator Exists matches any value; leave value out, or use operator Equal")
		case t.Operator != "Exists" && t.Key == "":
			ps.Add(doc, ta, "operator Equal needs a key; to tolerate every taint, use operator: Exists without a key")
		}
		if t.Key != "" && labelKeyProblem(t.Key) != "" {
			ps.Add(doc, ta.Child("key"), "%s", labelKeyProblem(t.Key))
		}
		if t.TolerationSeconds != nil && t.Effect != "NoExecute" {
			ps.AddKey(doc, ta.Child("toleration_seconds"), "toleration_seconds applies to effect NoExecute only")
		}
	}
	if p.PriorityClass != "" && !load.IsSubdomain(p.PriorityClass) {
		ps.Add(doc, at.Child("priority_class"), "%q is not a valid PriorityClass name", p.PriorityClass)
	}
}

// checkDisruptionBudget checks a workload's disruption budget.
func checkDisruptionBudget(doc *load.Document, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	b := w.DisruptionBudget
	if b == nil {
		return
	}
	ba := at.Child("disruption_budget")
	switch {
	case b.MaxUnavailable == nil && b.MinAvailable == nil:
		ps.Add(doc, ba, "needs one of max_unavailable or min_available")
		return
	case b.MaxUnavailable != nil && b.MinAvailable != nil:
		ps.Add(doc, ba, "takes one of max_unavailable or min_available, not both")
		return
	}
	for _, f := range []struct {
		field string
		v     *spec.IntOrPercent
	}{{"max_unavailable", b.MaxUnavailable}, {"min_available", b.MinAvailable}} {
		if f.v == nil {
			continue
		}
		checkIntOrPercent(doc, ba.Child(f.field), f.v, true, ps)
	}
	if n, ok := b.MaxUnavailable.IntValue(); ok && n == 0 || b.MaxUnavailable != nil && b.MaxUnavailable.String() == "0%" {
		ps.Warn(doc, ba.Child("max_unavailable"), "0 blocks every node drain until the budget changes")
	}
	if n, ok := b.MinAvailable.IntValue(); ok && w.Autoscaling == nil {
		replicas := 1
		if w.Replicas != nil {
			replicas = int(*w.Replicas)
		}
		if n >= replicas && replicas > 0 {
			ps.Warn(doc, ba.Child("min_available"), "%d of %d replicas blocks every node drain; keep it below the replicas", n, replicas)
		}
	}
}

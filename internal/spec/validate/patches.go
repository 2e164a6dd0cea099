package validate

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/secretscan"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Patches are kustomize patches on a component's objects. The checks make
// sure kustomize can apply them: the patch parses as YAML and is either a
// strategic merge patch (an object with kind and metadata.name, which
// kustomize requires even with a target: its PatchTransformer reads the
// patch as an object) or a JSON 6902 patch (a list of operations, with a
// target); the
// kinds and names it selects are the component's; and it carries no
// credential, since it is written to Git as it is.

var (
	kindName     = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	apiGroupName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	apiVersion   = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)
)

// workloadKinds are the kinds one of which a component renders its pods as.
var workloadKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "Job": true, "CronJob": true}

// mainKind is the kind of the object that runs a component's pods.
func mainKind(c *spec.Component, w *spec.WorkloadSpec) string {
	switch {
	case c.Type == spec.TypeJob:
		return "Job"
	case c.Type == spec.TypeCronJob:
		return "CronJob"
	case w.Persistent():
		return "StatefulSet"
	}
	return "Deployment"
}

var jsonPatchOps = map[string]bool{"add": true, "remove": true, "replace": true, "move": true, "copy": true, "test": true}

func checkPatches(doc *load.Document, a *load.LoadedApp, c *spec.Component, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	pc := &patchCheck{doc: doc, a: a, c: c, w: w, ps: ps, kind: mainKind(c, w), objName: layout.ObjectName(a.Spec.Name, c.Name)}
	for i, p := range w.Patches {
		pa := at.Child(i)
		if t := p.Target; t != nil {
			pc.target(pa.Child("target"), t)
		}
		if strings.TrimSpace(p.Patch) == "" {
			if doc.Has(pa.Child("patch")) {
				ps.Add(doc, pa.Child("patch"), "is empty")
			}
			continue
		}
		if ms := secretscan.Find(p.Patch); len(ms) > 0 {
			ps.Add(doc, pa.Child("patch"), "holds %s, which would be written to Git; take it from a Secret (valueFrom.secretKeyRef, or a secret volume) instead", ms[0].What)
			continue
		}
		pd, err := load.Parse("patch.yaml", []byte(p.Patch))
		if err != nil {
			msg := err.Error()
			var prob *diag.Diagnostic
			if errors.As(err, &prob) {
				msg = fmt.Sprintf("line %d of the patch: %s", prob.Line, prob.Message)
			}
			ps.Add(doc, pa.Child("patch"), "does not parse as YAML: %s", msg)
			continue
		}
		switch v := pd.Value.(type) {
		case map[string]any:
			pc.mergePatch(pa.Child("patch"), p.Target == nil, v)
		case []any:
			if p.Target == nil {
				ps.AddKey(doc, pa.Child("patch"), "a JSON 6902 patch (a list of operations) needs target, such as {kind: %s}", pc.kind)
			}
			for j, item := range v {
				if m := jsonOpProblem(item); m != "" {
					ps.Add(doc, pa.Child("patch"), "operation %d: %s", j+1, m)
				}
			}
		default:
			ps.Add(doc, pa.Child("patch"), "must be a map (a strategic merge patch) or a list of operations (a JSON 6902 patch); got %s", describeValue(pd.Value))
			continue
		}
		// Credentials by name, as in Helm values: an env entry such as
		// {name: DB_PASSWORD, value: …}.
		var inner load.Problems
		checkValuesSecrets(doc, pa.Child("patch"), pd.Value, &inner)
		if len(inner) > 0 {
			ps.Add(doc, pa.Child("patch"), "sets a value that looks like a credential (%s), which would be written to Git; take it from a Secret instead", strings.TrimLeft(strings.TrimPrefix(inner[0].Path, pa.Child("patch").String()), "."))
		}
	}
}

// patchCheck checks the patches of one component, which renders its
// workload as kind named objName.
type patchCheck struct {
	doc           *load.Document
	a             *load.LoadedApp
	c             *spec.Component
	w             *spec.WorkloadSpec
	ps            *load.Problems
	kind, objName string
}

// wrongKind reports, at where, a workload kind k other than the one the
// component renders, and whether it did.
func (pc *patchCheck) wrongKind(where load.Path, k string) bool {
	if !workloadKinds[k] || k == pc.kind {
		return false
	}
	why := ""
	switch {
	case pc.kind == "StatefulSet":
		why = " (it has a persistent volume)"
	case k == "StatefulSet":
		why = " (a StatefulSet needs a persistent volume: one with size)"
	}
	pc.ps.Add(pc.doc, where, "this component renders a %s%s, not a %s: the patch would match nothing", pc.kind, why, k)
	return true
}

// target checks a patch's target (at ta).
func (pc *patchCheck) target(ta load.Path, t *spec.PatchTarget) {
	doc, ps := pc.doc, pc.ps
	switch {
	case *t == spec.PatchTarget{}:
		ps.AddKey(doc, ta, "an empty target selects every object of the component; name a kind at least")
	case t.Kind != "" && !kindName.MatchString(t.Kind):
		ps.Add(doc, ta.Child("kind"), "%q is not a kind, such as Deployment", t.Kind)
	case t.Kind != "":
		pc.wrongKind(ta.Child("kind"), t.Kind)
	}
	if t.Group != "" && !apiGroupName.MatchString(t.Group) {
		ps.Add(doc, ta.Child("group"), "%q is not an API group, such as apps", t.Group)
	}
	if t.Version != "" && !apiVersion.MatchString(t.Version) {
		ps.Add(doc, ta.Child("version"), "%q is not an API version, such as v1", t.Version)
	}
	if t.Name != "" {
		if _, err := regexp.Compile("^(?:" + t.Name + ")$"); err != nil {
			ps.Add(doc, ta.Child("name"), "%q is not a regular expression: %v", t.Name, unwrapRegexp(err))
		}
	}
	for _, sel := range []struct{ field, v string }{{"label_selector", t.LabelSelector}, {"annotation_selector", t.AnnotationSelector}} {
		if m := selectorProblem(sel.v); m != "" {
			ps.Add(doc, ta.Child(sel.field), "%s", m)
		}
	}
}

// mergePatch checks a strategic merge patch (at pp; untargeted: it has no
// target, and kustomize finds the object by its kind and name).
func (pc *patchCheck) mergePatch(pp load.Path, untargeted bool, v map[string]any) {
	doc, ps, kind, objName := pc.doc, pc.ps, pc.kind, pc.objName
	k, _ := v["kind"].(string)
	meta, _ := v["metadata"].(map[string]any)
	n, _ := meta["name"].(string)
	switch {
	case (k == "" || n == "") && untargeted:
		ps.Add(doc, pp, "a strategic merge patch needs kind and metadata.name, by which kustomize finds the object it patches (here %s %s)", kind, objName)
	case k == "" || n == "":
		ps.Add(doc, pp, "a strategic merge patch needs kind and metadata.name even with a target, or kustomize refuses it (the target decides what is patched)")
	case untargeted && k == "Job":
		if !pc.wrongKind(pp, k) {
			ps.Add(doc, pp, "a Job's name carries a hash of its pod template, so a patch cannot name it; select it with target: {kind: Job}")
		}
	case untargeted && workloadKinds[k]:
		if !pc.wrongKind(pp, k) && n != objName {
			ps.Add(doc, pp, "the %s is named %s, not %s: the patch would match nothing", kind, objName, n)
		}
	case untargeted && k == "Service" && pc.c.Type == spec.TypeWorkload:
		names := []string{ServiceName(pc.a, pc.c)}
		if pc.w.Persistent() && (pc.w.Service == nil || pc.w.Service.Type != spec.ServiceHeadless) {
			names = append(names, objName+"-headless")
		}
		if !slices.Contains(names, n) {
			ps.Add(doc, pp, "the component's Service is named %s, not %s: the patch would match nothing", strings.Join(names, " or "), n)
		}
	case untargeted && k == "ConfigMap" && n != objName+"-files":
		ps.Add(doc, pp, "the component's ConfigMap (of its files) is named %s-files, not %s: the patch would match nothing", objName, n)
	}
	if m := mergeKeyProblem(k, v); m != "" {
		ps.Add(doc, pp, "%s", m)
	}
	if k == "Secret" {
		if _, has := v["data"]; has {
			ps.Add(doc, pp, "a patch may not carry Secret data, which would be written to Git")
		} else if _, has := v["stringData"]; has {
			ps.Add(doc, pp, "a patch may not carry Secret data, which would be written to Git")
		}
	}
}

func describeValue(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// jsonOpProblem says why a JSON 6902 operation is not valid, or "".
func jsonOpProblem(item any) string {
	m, ok := item.(map[string]any)
	if !ok {
		return "must be a map with op and path"
	}
	op, _ := m["op"].(string)
	p, hasPath := m["path"].(string)
	switch {
	case op == "":
		return "needs op: add, remove, replace, move, copy or test"
	case !jsonPatchOps[op]:
		return fmt.Sprintf("op %q is not one of add, remove, replace, move, copy or test", op)
	case !hasPath:
		return fmt.Sprintf("%s needs path, such as /spec/template/spec/hostAliases", op)
	case !strings.HasPrefix(p, "/"):
		return fmt.Sprintf("path %q must start with /", p)
	}
	_, hasValue := m["value"]
	from, hasFrom := m["from"].(string)
	switch op {
	case "add", "replace", "test":
		if !hasValue {
			return fmt.Sprintf("%s needs value", op)
		}
	case "move", "copy":
		if !hasFrom {
			return fmt.Sprintf("%s needs from", op)
		}
		if !strings.HasPrefix(from, "/") {
			return fmt.Sprintf("from %q must start with /", from)
		}
	}
	for k := range m {
		switch k {
		case "op", "path", "value", "from":
		default:
			return fmt.Sprintf("has unknown field %q", k)
		}
	}
	return ""
}

var selectorTerm = regexp.MustCompile(`^\s*!?\s*[A-Za-z0-9][-A-Za-z0-9_./]*\s*((==?|!=)\s*[-A-Za-z0-9_.]*|\s+(in|notin)\s*\([-A-Za-z0-9_.,\s]*\))?\s*$`)

// selectorProblem says why s is not a label selector, or "".
func selectorProblem(s string) string {
	if s == "" {
		return ""
	}
	depth := 0
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '(':
				depth++
				continue
			case ')':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if !selectorTerm.MatchString(s[start:i]) {
			return fmt.Sprintf("%q is not a label selector, such as app=web,tier!=cache", s)
		}
		start = i + 1
	}
	return ""
}

func unwrapRegexp(err error) string { return strings.TrimPrefix(err.Error(), "error parsing regexp: ") }

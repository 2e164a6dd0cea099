package verify

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// rule says which fields a mapping at a path must have. In a path, "x[]"
// means every item of the list x; "" is the object itself.
type rule struct {
	at     string
	fields []string
	// nonEmpty fields must also hold at least one item.
	nonEmpty bool
}

// podRules are the rules of a pod template's spec at prefix (the path of
// the PodSpec).
func podRules(spec string) []rule {
	rs := []rule{{at: spec, fields: []string{"containers"}, nonEmpty: true}}
	for _, list := range []string{"containers", "initContainers"} {
		c := spec + "." + list + "[]"
		rs = append(rs,
			rule{at: c, fields: []string{"name", "image"}},
			rule{at: c + ".ports[]", fields: []string{"containerPort"}},
			rule{at: c + ".env[]", fields: []string{"name"}},
			rule{at: c + ".volumeMounts[]", fields: []string{"name", "mountPath"}},
		)
	}
	return append(rs, rule{at: spec + ".volumes[]", fields: []string{"name"}})
}

func join(rs ...[]rule) []rule {
	var out []rule
	for _, r := range rs {
		out = append(out, r...)
	}
	return out
}

// kind is what verify knows of one group/kind beyond its Go type: the
// fields the API server (or a CustomResourceDefinition) requires, and the
// rules the API server enforces that the type cannot say, each reported at
// its field with the API server's sense of it.
type kind struct {
	required []rule
	rules    []kindRule
}

// kindRule checks an object of its kind, reporting each problem at its
// field through add.
type kindRule func(root *node, add func(field, format string, args ...any))

func rules(rs ...kindRule) []kindRule { return rs }

// owner is what a kind that owns a pod template at tmpl requires.
func owner(top []rule, tmpl string) []rule {
	return join(top, []rule{{at: tmpl, fields: []string{"spec"}}}, podRules(tmpl+".spec"))
}

// workload is what a Deployment, StatefulSet, DaemonSet and ReplicaSet
// require.
var workload = owner([]rule{{at: "", fields: []string{"spec"}}, {at: "spec", fields: []string{"selector", "template"}}}, "spec.template")

var binding = []rule{{at: "", fields: []string{"roleRef"}}, {at: "roleRef", fields: []string{"apiGroup", "kind", "name"}}, {at: "subjects[]", fields: []string{"kind", "name"}}}

// kinds holds, per group/kind, everything verify checks of its objects
// beyond their types. The Flux kinds' required fields are their CRDs'
// (TestFluxRequiredMatchesCRDs keeps them in step), plus spec itself.
var kinds = map[string]kind{
	"apps/Deployment":  {required: workload, rules: rules(selectorMatches, podTemplateRules("spec.template.spec", "Always"))},
	"apps/StatefulSet": {required: workload, rules: rules(selectorMatches, statefulSetRules)},
	"apps/DaemonSet":   {required: workload, rules: rules(selectorMatches, podTemplateRules("spec.template.spec", "Always"))},
	"apps/ReplicaSet":  {required: workload, rules: rules(selectorMatches, podTemplateRules("spec.template.spec", "Always"))},
	"batch/Job": {
		required: owner([]rule{{at: "", fields: []string{"spec"}}, {at: "spec", fields: []string{"template"}}}, "spec.template"),
		rules:    rules(podTemplateRules("spec.template.spec", "OnFailure", "Never")),
	},
	"batch/CronJob": {
		required: owner([]rule{{at: "", fields: []string{"spec"}}, {at: "spec", fields: []string{"schedule", "jobTemplate"}},
			{at: "spec.jobTemplate", fields: []string{"spec"}}, {at: "spec.jobTemplate.spec", fields: []string{"template"}}}, "spec.jobTemplate.spec.template"),
		rules: rules(cronJobRules),
	},
	"/Pod": {
		required: join([]rule{{at: "", fields: []string{"spec"}}}, podRules("spec")),
		rules:    rules(podTemplateRules("spec", "Always", "OnFailure", "Never")),
	},
	"/Service":                   {required: []rule{{at: "spec.ports[]", fields: []string{"port"}}}, rules: rules(serviceRules)},
	"/PersistentVolumeClaim":     {rules: rules(func(root *node, add func(string, string, ...any)) { claimSpecRules(root.Get("spec"), "spec", add) })},
	"/ConfigMap":                 {rules: rules(configMapRules)},
	"policy/PodDisruptionBudget": {rules: rules(pdbRules)},
	"networking.k8s.io/Ingress": {
		required: []rule{
			{at: "spec.rules[].http", fields: []string{"paths"}, nonEmpty: true},
			{at: "spec.rules[].http.paths[]", fields: []string{"pathType", "backend"}},
			{at: "spec.rules[].http.paths[].backend.service", fields: []string{"name", "port"}},
			{at: "spec.defaultBackend.service", fields: []string{"name", "port"}},
		},
		rules: rules(ingressBackend),
	},
	"autoscaling/HorizontalPodAutoscaler": {required: []rule{
		{at: "", fields: []string{"spec"}}, {at: "spec", fields: []string{"scaleTargetRef", "maxReplicas"}},
		{at: "spec.scaleTargetRef", fields: []string{"kind", "name"}}, {at: "spec.metrics[]", fields: []string{"type"}},
	}},
	"rbac.authorization.k8s.io/Role":               {required: []rule{{at: "rules[]", fields: []string{"verbs"}}}},
	"rbac.authorization.k8s.io/ClusterRole":        {required: []rule{{at: "rules[]", fields: []string{"verbs"}}}},
	"rbac.authorization.k8s.io/RoleBinding":        {required: binding},
	"rbac.authorization.k8s.io/ClusterRoleBinding": {required: binding},
	"kustomize.toolkit.fluxcd.io/Kustomization": {required: crd(map[string][]string{
		"":                                {"spec"},
		"spec":                            {"interval", "prune", "sourceRef"},
		"spec.decryption":                 {"provider"},
		"spec.decryption.secretRef":       {"name"},
		"spec.dependsOn[]":                {"name"},
		"spec.healthCheckExprs[]":         {"apiVersion", "current"},
		"spec.healthChecks[]":             {"kind", "name"},
		"spec.ignore[]":                   {"paths"},
		"spec.images[]":                   {"name"},
		"spec.kubeConfig.configMapRef":    {"name"},
		"spec.kubeConfig.secretRef":       {"name"},
		"spec.patches[]":                  {"patch"},
		"spec.postBuild.substituteFrom[]": {"kind", "name"},
		"spec.sourceRef":                  {"kind", "name"},
	})},
	"helm.toolkit.fluxcd.io/HelmRelease": {required: crd(map[string][]string{
		"":                                         {"spec"},
		"spec":                                     {"interval"},
		"spec.chart":                               {"spec"},
		"spec.chart.spec":                          {"chart", "sourceRef"},
		"spec.chart.spec.sourceRef":                {"kind", "name"},
		"spec.chart.spec.verify":                   {"provider"},
		"spec.chart.spec.verify.secretRef":         {"name"},
		"spec.chartRef":                            {"kind", "name"},
		"spec.dependsOn[]":                         {"name"},
		"spec.driftDetection.ignore[]":             {"paths"},
		"spec.healthCheckExprs[]":                  {"apiVersion", "current"},
		"spec.install.strategy":                    {"name"},
		"spec.kubeConfig.configMapRef":             {"name"},
		"spec.kubeConfig.secretRef":                {"name"},
		"spec.postRenderers[].kustomize.images[]":  {"name"},
		"spec.postRenderers[].kustomize.patches[]": {"patch"},
		"spec.test.filters[]":                      {"name"},
		"spec.upgrade.strategy":                    {"name"},
		"spec.valuesFrom[]":                        {"kind", "name"},
		"spec.waitStrategy":                        {"name"},
	})},
	"source.toolkit.fluxcd.io/HelmRepository": {required: crd(map[string][]string{
		"":                   {"spec"},
		"spec":               {"url"},
		"spec.accessFrom":    {"namespaceSelectors"},
		"spec.certSecretRef": {"name"},
		"spec.secretRef":     {"name"},
	})},
	"source.toolkit.fluxcd.io/GitRepository": {required: crd(map[string][]string{
		"":                          {"spec"},
		"spec":                      {"interval", "url"},
		"spec.include[]":            {"repository"},
		"spec.include[].repository": {"name"},
		"spec.proxySecretRef":       {"name"},
		"spec.secretRef":            {"name"},
		"spec.verify":               {"secretRef"},
		"spec.verify.secretRef":     {"name"},
	})},
	"source.toolkit.fluxcd.io/OCIRepository": {required: crd(map[string][]string{
		"":                                 {"spec"},
		"spec":                             {"interval", "url"},
		"spec.certSecretRef":               {"name"},
		"spec.proxySecretRef":              {"name"},
		"spec.secretRef":                   {"name"},
		"spec.verify":                      {"provider"},
		"spec.verify.matchOIDCIdentity[]":  {"issuer", "subject"},
		"spec.verify.secretRef":            {"name"},
		"spec.verify.trustedRootSecretRef": {"name"},
	}), rules: rules(ociRepositoryRules)},
	"source.toolkit.fluxcd.io/HelmChart": {required: crd(map[string][]string{
		"":                                {"spec"},
		"spec":                            {"chart", "interval", "sourceRef"},
		"spec.sourceRef":                  {"kind", "name"},
		"spec.verify":                     {"provider"},
		"spec.verify.matchOIDCIdentity[]": {"issuer", "subject"},
		"spec.verify.secretRef":           {"name"},
	})},
	"source.toolkit.fluxcd.io/Bucket": {required: crd(map[string][]string{
		"":                       {"spec"},
		"spec":                   {"bucketName", "endpoint", "interval"},
		"spec.certSecretRef":     {"name"},
		"spec.proxySecretRef":    {"name"},
		"spec.secretRef":         {"name"},
		"spec.sts":               {"endpoint", "provider"},
		"spec.sts.certSecretRef": {"name"},
		"spec.sts.secretRef":     {"name"},
	})},
}

// crd turns a CRD's required fields (path → fields) into rules, in the
// order of their paths.
func crd(req map[string][]string) []rule {
	var out []rule
	for _, at := range slices.Sorted(maps.Keys(req)) {
		out = append(out, rule{at: at, fields: req[at]})
	}
	return out
}

// selectorMatches: a workload's selector must select its pod template.
func selectorMatches(root *node, add func(string, string, ...any)) {
	sel, _ := root.Path("spec.selector.matchLabels")
	labels, _ := root.Path("spec.template.metadata.labels")
	if sel == nil || sel.Kind != yamlx.MapNode {
		return
	}
	for i := 0; i < len(sel.Kids); i += 2 {
		k, v := sel.Kids[i].Str, sel.Kids[i+1]
		if got := labels.Get(k); got == nil || got.Str != v.Str {
			add("spec.selector.matchLabels", "selector does not match the pod template's labels (%s)", k)
			return
		}
	}
}

// ingressBackend: an Ingress routes somewhere.
func ingressBackend(root *node, add func(string, string, ...any)) {
	if sp := root.Get("spec"); sp.Get("rules").IsNull() && sp.Get("defaultBackend").IsNull() {
		add("spec", "an Ingress needs rules or a defaultBackend")
	}
}

type missing struct {
	field, msg string
}

// missingRequired returns the required fields an object of a group/kind
// lacks, then what it breaks of the kind's rules.
func missingRequired(k string, root *node) []missing {
	var out []missing
	for _, r := range kinds[k].required {
		for _, m := range matchPath(root, r.at) {
			if m.n.Kind != yamlx.MapNode {
				continue
			}
			for _, f := range r.fields {
				v := m.n.Get(f)
				switch {
				case v.IsNull():
					out = append(out, missing{joinPath(m.path(), f), "required field is missing"})
				case r.nonEmpty && (v.Kind == yamlx.SeqNode || v.Kind == yamlx.MapNode) && len(v.Kids) == 0:
					out = append(out, missing{joinPath(m.path(), f), "must not be empty"})
				}
			}
		}
	}
	for _, rule := range kinds[k].rules {
		rule(root, func(field, format string, args ...any) {
			out = append(out, missing{field, fmt.Sprintf(format, args...)})
		})
	}
	return out
}

// match is a node a rule path leads to; its concrete path is built only
// when a finding needs it.
type match struct {
	n      *node
	parent *match
	seg    string // the key that led here, or "" for a list item
	idx    int    // the list index that led here
}

func (m *match) path() string {
	if m == nil || m.parent == nil && m.seg == "" {
		return ""
	}
	if m.seg == "" {
		return m.parent.path() + "[" + strconv.Itoa(m.idx) + "]"
	}
	return joinPath(m.parent.path(), m.seg)
}

// matchPath returns the nodes at a rule path.
func matchPath(root *node, pattern string) []*match {
	cur := []*match{{n: root}}
	for pattern != "" {
		seg, rest, _ := strings.Cut(pattern, ".")
		pattern = rest
		list := strings.HasSuffix(seg, "[]")
		seg = strings.TrimSuffix(seg, "[]")
		var next []*match
		for _, m := range cur {
			v := m.n.Get(seg)
			if v == nil {
				continue
			}
			at := &match{n: v, parent: m, seg: seg}
			if !list {
				next = append(next, at)
				continue
			}
			if v.Kind != yamlx.SeqNode {
				continue
			}
			for i, item := range v.Kids {
				next = append(next, &match{n: item, parent: at, idx: i})
			}
		}
		if len(next) == 0 {
			return nil
		}
		cur = next
	}
	return cur
}

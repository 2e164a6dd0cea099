package verify

import (
	"fmt"
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

// builtinRequired holds, per group/kind, what the Kubernetes API server's
// validation requires of the built-in kinds the fleet uses (their Go types
// cannot say it: most such fields are tagged omitempty).
var builtinRequired = map[string][]rule{
	"apps/Deployment": join([]rule{{at: "", fields: []string{"spec"}}, {at: "spec", fields: []string{"selector", "template"}},
		{at: "spec.template", fields: []string{"spec"}}}, podRules("spec.template.spec")),
	"apps/StatefulSet": join([]rule{{at: "", fields: []string{"spec"}}, {at: "spec", fields: []string{"selector", "template"}},
		{at: "spec.template", fields: []string{"spec"}}}, podRules("spec.template.spec")),
	"apps/DaemonSet": join([]rule{{at: "", fields: []string{"spec"}}, {at: "spec", fields: []string{"selector", "template"}},
		{at: "spec.template", fields: []string{"spec"}}}, podRules("spec.template.spec")),
	"apps/ReplicaSet": join([]rule{{at: "", fields: []string{"spec"}}, {at: "spec", fields: []string{"selector", "template"}},
		{at: "spec.template", fields: []string{"spec"}}}, podRules("spec.template.spec")),
	"batch/Job": join([]rule{{at: "", fields: []string{"spec"}}, {at: "spec", fields: []string{"template"}},
		{at: "spec.template", fields: []string{"spec"}}}, podRules("spec.template.spec")),
	"batch/CronJob": join([]rule{{at: "", fields: []string{"spec"}}, {at: "spec", fields: []string{"schedule", "jobTemplate"}},
		{at: "spec.jobTemplate", fields: []string{"spec"}}, {at: "spec.jobTemplate.spec", fields: []string{"template"}},
		{at: "spec.jobTemplate.spec.template", fields: []string{"spec"}}}, podRules("spec.jobTemplate.spec.template.spec")),
	"/Pod":     join([]rule{{at: "", fields: []string{"spec"}}}, podRules("spec")),
	"/Service": {{at: "spec.ports[]", fields: []string{"port"}}},
	"networking.k8s.io/Ingress": {
		{at: "spec.rules[].http", fields: []string{"paths"}, nonEmpty: true},
		{at: "spec.rules[].http.paths[]", fields: []string{"pathType", "backend"}},
		{at: "spec.rules[].http.paths[].backend.service", fields: []string{"name", "port"}},
		{at: "spec.defaultBackend.service", fields: []string{"name", "port"}},
	},
	"autoscaling/HorizontalPodAutoscaler": {
		{at: "", fields: []string{"spec"}}, {at: "spec", fields: []string{"scaleTargetRef", "maxReplicas"}},
		{at: "spec.scaleTargetRef", fields: []string{"kind", "name"}}, {at: "spec.metrics[]", fields: []string{"type"}},
	},
	"rbac.authorization.k8s.io/Role":               {{at: "rules[]", fields: []string{"verbs"}}},
	"rbac.authorization.k8s.io/ClusterRole":        {{at: "rules[]", fields: []string{"verbs"}}},
	"rbac.authorization.k8s.io/RoleBinding":        {{at: "", fields: []string{"roleRef"}}, {at: "roleRef", fields: []string{"apiGroup", "kind", "name"}}, {at: "subjects[]", fields: []string{"kind", "name"}}},
	"rbac.authorization.k8s.io/ClusterRoleBinding": {{at: "", fields: []string{"roleRef"}}, {at: "roleRef", fields: []string{"apiGroup", "kind", "name"}}, {at: "subjects[]", fields: []string{"kind", "name"}}},
}

// fluxRequired holds the required fields of Flux's kinds, as their
// CustomResourceDefinitions declare them (TestFluxRequiredMatchesCRDs keeps
// it in step), plus spec itself.
var fluxRequired = map[string]map[string][]string{
	"kustomize.toolkit.fluxcd.io/Kustomization": {
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
	},
	"helm.toolkit.fluxcd.io/HelmRelease": {
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
	},
	"source.toolkit.fluxcd.io/HelmRepository": {
		"":                   {"spec"},
		"spec":               {"url"},
		"spec.accessFrom":    {"namespaceSelectors"},
		"spec.certSecretRef": {"name"},
		"spec.secretRef":     {"name"},
	},
	"source.toolkit.fluxcd.io/GitRepository": {
		"":                          {"spec"},
		"spec":                      {"interval", "url"},
		"spec.include[]":            {"repository"},
		"spec.include[].repository": {"name"},
		"spec.proxySecretRef":       {"name"},
		"spec.secretRef":            {"name"},
		"spec.verify":               {"secretRef"},
		"spec.verify.secretRef":     {"name"},
	},
	"source.toolkit.fluxcd.io/OCIRepository": {
		"":                                 {"spec"},
		"spec":                             {"interval", "url"},
		"spec.certSecretRef":               {"name"},
		"spec.proxySecretRef":              {"name"},
		"spec.secretRef":                   {"name"},
		"spec.verify":                      {"provider"},
		"spec.verify.matchOIDCIdentity[]":  {"issuer", "subject"},
		"spec.verify.secretRef":            {"name"},
		"spec.verify.trustedRootSecretRef": {"name"},
	},
	"source.toolkit.fluxcd.io/HelmChart": {
		"":                                {"spec"},
		"spec":                            {"chart", "interval", "sourceRef"},
		"spec.sourceRef":                  {"kind", "name"},
		"spec.verify":                     {"provider"},
		"spec.verify.matchOIDCIdentity[]": {"issuer", "subject"},
		"spec.verify.secretRef":           {"name"},
	},
	"source.toolkit.fluxcd.io/Bucket": {
		"":                       {"spec"},
		"spec":                   {"bucketName", "endpoint", "interval"},
		"spec.certSecretRef":     {"name"},
		"spec.proxySecretRef":    {"name"},
		"spec.secretRef":         {"name"},
		"spec.sts":               {"endpoint", "provider"},
		"spec.sts.certSecretRef": {"name"},
		"spec.sts.secretRef":     {"name"},
	},
}

type missing struct {
	field, msg string
}

// missingRequired returns the required fields an object lacks, and the
// few cross-field rules the API server enforces on them.
func missingRequired(kind string, root *node) []missing {
	var out []missing
	check := func(r rule) {
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
	for _, r := range builtinRequired[kind] {
		check(r)
	}
	for at, fields := range fluxRequired[kind] {
		check(rule{at: at, fields: fields})
	}
	switch kind {
	case "apps/Deployment", "apps/StatefulSet", "apps/DaemonSet", "apps/ReplicaSet":
		sel, _ := root.Path("spec.selector.matchLabels")
		labels, _ := root.Path("spec.template.metadata.labels")
		if sel != nil && sel.Kind == yamlx.MapNode {
			for i := 0; i < len(sel.Kids); i += 2 {
				k, v := sel.Kids[i].Str, sel.Kids[i+1]
				if got := labels.Get(k); got == nil || got.Str != v.Str {
					out = append(out, missing{"spec.selector.matchLabels", fmt.Sprintf("selector does not match the pod template's labels (%s)", k)})
					break
				}
			}
		}
	case "networking.k8s.io/Ingress":
		if sp := root.Get("spec"); sp.Get("rules").IsNull() && sp.Get("defaultBackend").IsNull() {
			out = append(out, missing{"spec", "an Ingress needs rules or a defaultBackend"})
		}
	}
	return append(out, apiRules(kind, root)...)
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

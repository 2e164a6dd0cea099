package verify

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// Pod Security Admission refuses, in a namespace labelled
// pod-security.kubernetes.io/enforce, the pods that break its standard:
// a Deployment is accepted, and then its ReplicaSet creates no pod. verify
// evaluates every pod template with the admission plugin's own checks
// (k8s.io/pod-security-admission), at the level the namespace's labels in
// the fleet enforce, else the level platform.yaml's policy.pod_security
// gives project namespaces.

// podCandidate is a pod template waiting for the namespaces' levels.
type podCandidate struct {
	o    *object
	path string // the pod spec's field path
}

// namespaceLevel is what a Namespace object of the fleet enforces.
type namespaceLevel struct {
	level, version string
}

// recordPodSecurity notes a Namespace's enforced level, or a pod template
// to evaluate once every namespace is known.
func (r *run) recordPodSecurity(o *object) {
	gvk := gvkOf(o.root)
	if gvk.Group == "" && gvk.Kind == "Namespace" {
		labels := o.root.Get("metadata").Get("labels")
		if l := labels.Get(psaapi.EnforceLevelLabel).Text(); l != "" {
			r.mu.Lock()
			r.nsLevels[o.name] = namespaceLevel{l, labels.Get(psaapi.EnforceVersionLabel).Text()}
			r.mu.Unlock()
		}
		return
	}
	sp, ok := podSpecPaths[gvk.Group+"/"+gvk.Kind]
	if !ok || gvk.Kind == "PodTemplate" {
		return
	}
	r.mu.Lock()
	r.pods = append(r.pods, podCandidate{o, sp})
	r.mu.Unlock()
}

// podSecurity evaluates the recorded pod templates.
func (r *run) podSecurity() {
	if len(r.pods) == 0 {
		return
	}
	eval, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		r.findings.add(Finding{Check: CheckPodSecurity, Diagnostic: diag.Diagnostic{Severity: SeverityError, Message: "pod security checks: " + err.Error()}})
		return
	}
	for _, c := range r.pods {
		lv, where, ok := r.levelOf(c.o.namespace)
		if !ok || lv.Level == psaapi.LevelPrivileged {
			continue
		}
		meta, spec, ok := podOf(c.o.root, c.path)
		if !ok {
			continue // the API check reports what does not decode
		}
		agg := psapolicy.AggregateCheckResults(eval.EvaluatePod(lv, &meta, &spec))
		if agg.Allowed {
			continue
		}
		var parts []string
		for i, reason := range agg.ForbiddenReasons {
			if d := agg.ForbiddenDetails[i]; d != "" {
				reason += " (" + d + ")"
			}
			parts = append(parts, reason)
		}
		r.findings.add(r.finding(c.o, CheckPodSecurity, SeverityError, c.path,
			fmt.Sprintf("its pods violate PodSecurity %q, which %s enforces, and would be refused: %s", lv.String(), where, strings.Join(parts, ", "))))
	}
}

// levelOf returns the level a namespace enforces: its labels when the
// fleet defines it, else the platform's policy for project namespaces.
func (r *run) levelOf(ns string) (psaapi.LevelVersion, string, bool) {
	level, version, where := "", "", ""
	if l, ok := r.nsLevels[ns]; ok {
		level, version, where = l.level, l.version, "namespace "+ns
	} else if l, field := r.plat.PodSecuritySource(ns); l != "" && ns != "" {
		level, where = l, "platform.yaml's "+field
	}
	if level == "" {
		return psaapi.LevelVersion{}, "", false
	}
	l, err := psaapi.ParseLevel(level)
	if err != nil {
		return psaapi.LevelVersion{}, "", false
	}
	v := psaapi.LatestVersion()
	if version != "" {
		if pv, err := psaapi.ParseVersion(version); err == nil {
			v = pv
		}
	}
	return psaapi.LevelVersion{Level: l, Version: v}, where, true
}

// podOf decodes the pod template at a pod spec path: its metadata (the
// template's) and spec.
func podOf(root *node, specPath string) (meta metav1.ObjectMeta, spec corev1.PodSpec, ok bool) {
	sp, _ := root.Path(specPath)
	if sp == nil || sp.Kind != yamlx.MapNode {
		return meta, spec, false
	}
	if err := json.Unmarshal(yamlx.AppendJSON(nil, sp), &spec); err != nil {
		return meta, spec, false
	}
	if md, _ := root.Path(strings.TrimSuffix(specPath, "spec") + "metadata"); md != nil && md.Kind == yamlx.MapNode {
		_ = json.Unmarshal(yamlx.AppendJSON(nil, md), &meta)
	}
	return meta, spec, true
}

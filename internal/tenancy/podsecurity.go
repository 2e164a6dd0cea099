package tenancy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
)

// podSpecPaths are where each workload kind keeps its pod spec, by
// group/kind.
var podSpecPaths = map[string][]string{
	"apps/Deployment": {"spec", "template", "spec"}, "apps/StatefulSet": {"spec", "template", "spec"},
	"apps/DaemonSet": {"spec", "template", "spec"}, "apps/ReplicaSet": {"spec", "template", "spec"},
	"batch/Job": {"spec", "template", "spec"}, "batch/CronJob": {"spec", "jobTemplate", "spec", "template", "spec"},
	"/Pod": {"spec"}, "/PodTemplate": {"template", "spec"}, "/ReplicationController": {"spec", "template", "spec"},
}

// evaluator is Pod Security Admission's own evaluator, built once: it holds
// only the fixed list of checks.
var evaluator = sync.OnceValues(func() (psapolicy.Evaluator, error) {
	return psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
})

// Level returns the Pod Security level a patch is judged at: the project's,
// with none (no namespace label) judged as baseline; ok is false for
// privileged, which a platform team grants on purpose.
func Level(podSecurity string) (psaapi.LevelVersion, bool) {
	l := psaapi.LevelBaseline
	if podSecurity != "" {
		pl, err := psaapi.ParseLevel(podSecurity)
		if err != nil {
			pl = psaapi.LevelBaseline
		}
		l = pl
	}
	if l == psaapi.LevelPrivileged {
		return psaapi.LevelVersion{}, false
	}
	return psaapi.LevelVersion{Level: l, Version: psaapi.LatestVersion()}, true
}

// podSecurity reports what the patched pod template of a workload breaks
// of the project's Pod Security (host namespaces, hostPath, privileged,
// added capabilities and the rest of the standard) that the unpatched one
// did not.
func podSecurity(before, after Object, level string) []Problem {
	id := IDOf(after)
	path, ok := podSpecPaths[id.Group+"/"+id.Kind]
	if !ok {
		return nil
	}
	lv, ok := Level(level)
	if !ok {
		return nil
	}
	eval, err := evaluator()
	if err != nil {
		return []Problem{{Object: label(after), Message: "pod security checks: " + err.Error()}}
	}
	newReasons := forbidden(eval, lv, after, path)
	if len(newReasons) == 0 {
		return nil
	}
	old := forbidden(eval, lv, before, path)
	var fresh []string
	for _, r := range newReasons {
		if !slices.Contains(old, r) {
			fresh = append(fresh, r)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	what := "the project's Pod Security level " + string(lv.Level)
	if level == "" {
		what = "Pod Security level baseline (what a patch is held to where platform.yaml sets no policy.pod_security)"
	}
	return []Problem{{Object: label(after), Path: strings.Join(path, "."),
		Message: fmt.Sprintf("the patches give its pods what %s forbids: %s", what, strings.Join(fresh, ", "))}}
}

// forbidden returns the reasons Pod Security refuses an object's pod
// template at a level; nil when it passes or does not decode.
func forbidden(eval psapolicy.Evaluator, lv psaapi.LevelVersion, o Object, path []string) []string {
	var tmpl any = o
	for _, p := range path[:len(path)-1] {
		m, _ := tmpl.(map[string]any)
		tmpl = m[p]
	}
	parent, _ := tmpl.(map[string]any)
	sp, _ := parent["spec"].(map[string]any)
	if sp == nil {
		return nil
	}
	var spec corev1.PodSpec
	var meta metav1.ObjectMeta
	if b, err := json.Marshal(sp); err != nil || json.Unmarshal(b, &spec) != nil {
		return nil
	}
	if md, ok := parent["metadata"].(map[string]any); ok {
		if b, err := json.Marshal(md); err == nil {
			_ = json.Unmarshal(b, &meta)
		}
	}
	agg := psapolicy.AggregateCheckResults(eval.EvaluatePod(lv, &meta, &spec))
	if agg.Allowed {
		return nil
	}
	out := make([]string, len(agg.ForbiddenReasons))
	for i, r := range agg.ForbiddenReasons {
		if d := agg.ForbiddenDetails[i]; d != "" {
			r += " (" + d + ")"
		}
		out[i] = r
	}
	return out
}

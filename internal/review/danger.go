package review

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// dangers lists changes Kubernetes will reject, that destroy data or that
// run something again, and, marked informational, changes whose effect is
// easy to miss (a cron schedule).
//
// removedOCI counts, per removed app, the OCIRepositories that go with its
// Kustomizations; kept are the removed apps whose Kustomizations Flux does
// not prune, keptDirs the folders of the removed components it does not
// prune.
func dangers(apps []*appChange, base, head map[string]object, bw, hw map[string]object, removedOCI map[string]int, kept, keptDirs map[string]bool) []string {
	var out []string
	removedApps := map[string]bool{}
	for _, a := range apps {
		if a.status == "removed" {
			removedApps[a.key] = true
			if kept[a.key] {
				out = append(out, fmt.Sprintf("app %s is removed from the fleet, but its Kustomizations are marked `%s` (the first step of its move to its project's source): "+
					"Flux does not prune them, so they and every object they applied stay on the cluster; delete them by hand", code(a.key), layout.PruneDisabledLine))
				continue
			}
			d := fmt.Sprintf("app %s is removed: Flux prunes every object it created", code(a.key))
			if n := removedOCI[a.key]; n > 0 {
				verb := "go"
				if n == 1 {
					verb = "goes"
				}
				d += fmt.Sprintf("; its %s %s with its Kustomizations", plural(n, "OCIRepository"), verb)
			}
			out = append(out, d)
		}
	}
	// The head's workloads by the ServiceAccount they run as (its key) and
	// by each label of their pods (namespace/key=value), made when
	// a ServiceAccount is removed or a PodDisruptionBudget changes.
	var byAccount, byLabel map[string][]object
	index := func() {
		if byAccount != nil {
			return
		}
		byAccount, byLabel = map[string][]object{}, map[string][]object{}
		for _, key := range slices.Sorted(maps.Keys(hw)) {
			w := hw[key]
			if sa := str(get(podSpec(w), "serviceAccountName")); sa != "" {
				k := fleet.ObjectKey(w.OnCluster(), "ServiceAccount", w.Namespace, sa)
				byAccount[k] = append(byAccount[k], w)
			}
			labels, _ := get(w.Obj, "spec", "template", "metadata", "labels").(map[string]any)
			for k, v := range labels {
				l := inCluster(w.OnCluster(), w.Namespace+"/"+k+"="+fmt.Sprint(v))
				byLabel[l] = append(byLabel[l], w)
			}
		}
	}
	paired := map[string]bool{} // ids of workloads handled as a pair
	for _, key := range unionKeys(bw, hw) {
		bo, bok := bw[key]
		ho, hok := hw[key]
		if !bok || !hok || bo.Key() == ho.Key() {
			continue
		}
		paired[bo.Key()], paired[ho.Key()] = true, true
		out = append(out, replaced(bo, ho)...)
	}
	for _, id := range unionKeys(base, head) {
		bo, bok := base[id]
		ho, hok := head[id]
		switch {
		case bok && !hok && !paired[id]:
			app := bo.AppKey()
			if kept[app] || keptDirs[bo.ComponentDir()] {
				break // Flux keeps it
			}
			out = append(out, removed(bo, app == "" || removedApps[app])...)
			if bo.Kind == "ServiceAccount" {
				index()
				out = append(out, stillUsed(bo, byAccount[bo.Key()])...)
			}
		case bok && hok:
			out = append(out, immutable(bo, ho)...)
		}
		if hok && ho.Kind == "PodDisruptionBudget" && (!bok || !reflect.DeepEqual(bo.Obj, ho.Obj)) {
			index()
			out = append(out, blocksEvictions(ho, byLabel, head)...)
		}
	}
	return out
}

// stillUsed names the workloads that still run as a ServiceAccount the
// change removes: the API server refuses their new pods until it exists.
func stillUsed(sa object, users []object) []string {
	var out []string
	for _, w := range users {
		out = append(out, fmt.Sprintf("ServiceAccount %s is removed but %s %s still runs as it: its new pods are refused until the ServiceAccount exists",
			name(sa), w.Kind, name(w)))
	}
	return out
}

// blocksEvictions says when a PodDisruptionBudget allows no voluntary
// eviction of the pods it selects: a node drain then waits for ever.
func blocksEvictions(pdb object, byLabel map[string][]object, all map[string]object) []string {
	sel, _ := get(pdb.Obj, "spec", "selector", "matchLabels").(map[string]any)
	if len(sel) == 0 {
		return nil
	}
	first := slices.Min(slices.Collect(maps.Keys(sel)))
	for _, w := range byLabel[inCluster(pdb.OnCluster(), pdb.Namespace+"/"+first+"="+fmt.Sprint(sel[first]))] {
		labels, _ := get(w.Obj, "spec", "template", "metadata", "labels").(map[string]any)
		if !longRunning[w.Kind] || !matches(sel, labels) {
			continue
		}
		replicas := replicasOf(w, all)
		maxU, minA := get(pdb.Obj, "spec", "maxUnavailable"), get(pdb.Obj, "spec", "minAvailable")
		if maxU == float64(0) || maxU == "0%" || minA == "100%" || func() bool { m, ok := minA.(float64); return ok && int64(m) >= replicas }() {
			return []string{fmt.Sprintf("PodDisruptionBudget %s allows no pod of %s %s (%d replica(s)) to be evicted: node drains and cluster upgrades wait until it is changed",
				name(pdb), w.Kind, name(w), replicas)}
		}
	}
	return nil
}

func matches(sel, labels map[string]any) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// name is an object's namespace and name as a code span.
func name(o object) string {
	if o.Namespace == "" {
		return code(o.Name)
	}
	return code(o.Namespace + "/" + o.Name)
}

// removed is the danger of an object that is pruned; quiet says the app
// (or nothing fleetwright renders) holds it, so that a workload need not be
// named on its own.
func removed(bo object, quiet bool) []string {
	switch bo.Kind {
	case "HelmRelease":
		return []string{fmt.Sprintf("addon %s is removed: the chart is uninstalled and its data volumes may be deleted", name(bo))}
	case "Namespace":
		return []string{fmt.Sprintf("namespace %s is removed: everything in it is deleted", code(bo.Name))}
	case "PersistentVolumeClaim":
		if keptFromPrune(bo) {
			return []string{fmt.Sprintf("volume claim %s leaves the fleet: Flux keeps it and its data (%s); delete it by hand once its data is no longer needed",
				name(bo), code(layout.PruneDisabledLine))}
		}
		return []string{fmt.Sprintf("volume claim %s is removed: its data is lost", name(bo))}
	case "StatefulSet":
		return []string{fmt.Sprintf("StatefulSet %s is removed: Flux prunes it; %s", name(bo), claimFate(bo))}
	case "Deployment":
		if !quiet {
			return []string{fmt.Sprintf("workload %s is removed: Flux prunes it", name(bo))}
		}
	}
	return nil
}

// claimFate says what happens to a StatefulSet's claims when it is
// deleted: kept unless its retention policy deletes them.
func claimFate(o object) string {
	claims := slices.Sorted(maps.Keys(claimTemplates(o)))
	if len(claims) == 0 {
		return "it has no volume claims"
	}
	list := codes(claims)
	if str(get(o.Obj, "spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted")) == "Delete" {
		return fmt.Sprintf("its claims of %s are deleted with it (retain: false): their data is lost", list)
	}
	return fmt.Sprintf("its claims of %s are kept (the volumes retain them): delete them by hand once their data is no longer needed", list)
}

// replaced is the danger of a component's workload that is replaced by
// another object: a Job that runs again under a new name, a workload that
// changes kind.
func replaced(bo, ho object) []string {
	switch {
	case bo.Kind == "Job" && ho.Kind == "Job":
		return []string{fmt.Sprintf("Job %s runs again: its template changed, so it has a new name (was %s); the old Job is pruned",
			name(ho), code(bo.Name))}
	case bo.Kind == "StatefulSet" && ho.Kind != "StatefulSet":
		return []string{fmt.Sprintf("%s %s replaces StatefulSet %s: every pod is recreated without the StatefulSet's volume claims; %s",
			ho.Kind, name(ho), name(bo), claimFate(bo))}
	case ho.Kind == "StatefulSet" && bo.Kind != "StatefulSet":
		return []string{fmt.Sprintf("StatefulSet %s replaces %s %s: every pod is recreated, and each replica starts on a new, empty volume claim",
			name(ho), bo.Kind, name(bo))}
	case bo.Kind != ho.Kind:
		return []string{fmt.Sprintf("%s %s replaces %s %s: every pod is recreated", ho.Kind, name(ho), bo.Kind, name(bo))}
	}
	return nil
}

// immutable lists the dangers of an object changed in place.
func immutable(bo, ho object) []string {
	n := name(bo)
	var out []string
	changed := func(path ...any) bool { return !reflect.DeepEqual(get(bo.Obj, path...), get(ho.Obj, path...)) }
	switch bo.Kind {
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet":
		if changed("spec", "selector") {
			out = append(out, fmt.Sprintf("%s %s: spec.selector is immutable; the apply will be rejected (the workload must be recreated)", bo.Kind, n))
		}
	}
	switch bo.Kind {
	case "StatefulSet":
		out = append(out, statefulSet(bo, ho)...)
	case "Job":
		if changed("spec", "template") {
			out = append(out, fmt.Sprintf("Job %s: its pod template changes under the same name; a Job's template is immutable, so the apply will be rejected", n))
		}
	case "CronJob":
		if changed("spec", "schedule") || changed("spec", "timeZone") {
			out = append(out, fmt.Sprintf("CronJob %s: the schedule changes from %s to %s (informational: the next runs follow the new schedule)",
				n, code(schedule(bo)), code(schedule(ho))))
		}
		if changed("spec", "suspend") && get(ho.Obj, "spec", "suspend") == true {
			out = append(out, fmt.Sprintf("CronJob %s is suspended: it starts no more jobs (informational)", n))
		}
	case "Service":
		out = append(out, service(bo, ho)...)
	case "HelmRelease":
		if changed("spec", "chart", "spec", "chart") || changed("spec", "releaseName") {
			out = append(out, fmt.Sprintf("HelmRelease %s: the chart or release name changes: Helm installs a new release and the old one's data may be lost", n))
		}
		if persistenceChanged(get(bo.Obj, "spec", "values"), get(ho.Obj, "spec", "values"), "") {
			out = append(out, fmt.Sprintf("HelmRelease %s: persistence settings change; volume claims are mostly immutable and a resize may be rejected", n))
		}
	case "PersistentVolumeClaim":
		out = append(out, claim(bo, ho)...)
	}
	return out
}

func schedule(o object) string {
	s := str(get(o.Obj, "spec", "schedule"))
	if tz := str(get(o.Obj, "spec", "timeZone")); tz != "" {
		s += " " + tz
	}
	return s
}

// statefulSet lists what a StatefulSet's change does to its claims and
// which of its immutable fields change.
func statefulSet(bo, ho object) []string {
	n := name(bo)
	var out []string
	for _, f := range []string{"serviceName", "podManagementPolicy"} {
		if !reflect.DeepEqual(get(bo.Obj, "spec", f), get(ho.Obj, "spec", f)) {
			out = append(out, fmt.Sprintf("StatefulSet %s: spec.%s is immutable (%v → %v); the apply will be rejected (the StatefulSet must be recreated)",
				n, f, md(orDash(fmt.Sprint(orNil(get(bo.Obj, "spec", f))))), md(orDash(fmt.Sprint(orNil(get(ho.Obj, "spec", f)))))))
		}
	}
	oldT, newT := claimTemplates(bo), claimTemplates(ho)
	var what []string
	for _, c := range unionKeys(oldT, newT) {
		ot, ook := oldT[c]
		nt, nok := newT[c]
		switch {
		case !ook:
			what = append(what, fmt.Sprintf("claim %s is added", code(c)))
		case !nok:
			what = append(what, fmt.Sprintf("claim %s is removed (its data would no longer be mounted)", code(c)))
		case !reflect.DeepEqual(ot, nt):
			what = append(what, fmt.Sprintf("claim %s changes (%s)", code(c), claimDelta(get(ot, "spec"), get(nt, "spec"))))
		}
	}
	if len(what) > 0 {
		out = append(out, fmt.Sprintf("StatefulSet %s: spec.volumeClaimTemplates is immutable and the apply will be rejected: %s. "+
			"Existing claims keep their data and size: to grow one, resize the claims themselves (when the storage class allows expansion); "+
			"anything else needs the StatefulSet recreated and the data moved",
			n, strings.Join(what, "; ")))
	}
	oldR, newR := replicasOf(bo, nil), replicasOf(ho, nil)
	if newR < oldR && str(get(ho.Obj, "spec", "persistentVolumeClaimRetentionPolicy", "whenScaled")) == "Delete" && len(newT) > 0 {
		out = append(out, fmt.Sprintf("StatefulSet %s scales from %d to %d replicas and its volumes do not retain claims (retain: false): the claims of replicas %s are deleted with their data",
			n, oldR, newR, ordinals(newR, oldR)))
	}
	if str(get(bo.Obj, "spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted")) != "Delete" &&
		str(get(ho.Obj, "spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted")) == "Delete" && len(newT) > 0 {
		out = append(out, fmt.Sprintf("StatefulSet %s no longer retains its claims (retain: false): from now on, deleting it or the app deletes their data (informational)", n))
	}
	return out
}

func orNil(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// ordinals names replicas from..to-1.
func ordinals(from, to int64) string {
	if to-from == 1 {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d–%d", from, to-1)
}

// claimDelta describes how a claim's spec changes: its size, class and
// access modes.
func claimDelta(a, b any) string {
	var parts []string
	oq, nq := quantity(get(a, "resources", "requests", "storage")), quantity(get(b, "resources", "requests", "storage"))
	if oq.Cmp(nq) != 0 {
		parts = append(parts, "size "+md(orDash(oq.String()))+" → "+md(orDash(nq.String())))
	}
	if oc, nc := str(get(a, "storageClassName")), str(get(b, "storageClassName")); oc != nc {
		parts = append(parts, "storage class "+md(orDash(oc))+" → "+md(orDash(nc)))
	}
	if !reflect.DeepEqual(get(a, "accessModes"), get(b, "accessModes")) {
		parts = append(parts, "access modes "+md(fmt.Sprint(get(a, "accessModes")))+" → "+md(fmt.Sprint(get(b, "accessModes"))))
	}
	if len(parts) == 0 {
		return "its spec"
	}
	return strings.Join(parts, ", ")
}

// claim lists what a PersistentVolumeClaim's change does: it may only
// grow, and the rest of its spec is immutable.
func claim(bo, ho object) []string {
	n := name(bo)
	a, b := get(bo.Obj, "spec"), get(ho.Obj, "spec")
	if reflect.DeepEqual(a, b) {
		return nil
	}
	var out []string
	oq, nq := quantity(get(a, "resources", "requests", "storage")), quantity(get(b, "resources", "requests", "storage"))
	switch oq.Cmp(nq) {
	case 1:
		out = append(out, fmt.Sprintf("PersistentVolumeClaim %s shrinks from %s to %s: a claim cannot shrink, the apply will be rejected", n, oq.String(), nq.String()))
	case -1:
		out = append(out, fmt.Sprintf("PersistentVolumeClaim %s grows from %s to %s: only if its storage class allows volume expansion (else the apply is rejected)", n, oq.String(), nq.String()))
	}
	rest := func(v any) any {
		m, _ := v.(map[string]any)
		c := map[string]any{}
		for k, x := range m {
			if k != "resources" {
				c[k] = x
			}
		}
		return c
	}
	if !reflect.DeepEqual(rest(a), rest(b)) {
		out = append(out, fmt.Sprintf("PersistentVolumeClaim %s: %s change; a bound claim's spec is immutable apart from its size, the apply will be rejected", n, claimDelta(a, b)))
	}
	return out
}

// service lists the dangers of a Service's change.
func service(bo, ho object) []string {
	n := name(bo)
	var out []string
	oldIP, newIP := str(get(bo.Obj, "spec", "clusterIP")), str(get(ho.Obj, "spec", "clusterIP"))
	oldT, newT := str(get(bo.Obj, "spec", "type")), str(get(ho.Obj, "spec", "type"))
	switch {
	case oldIP == newIP:
	case oldIP == "None" || newIP == "None":
		what := "becomes headless"
		if oldIP == "None" {
			what = "is no longer headless"
		}
		out = append(out, fmt.Sprintf("Service %s %s: spec.clusterIP is immutable, the apply will be rejected (the Service must be deleted and recreated)", n, what))
	case oldIP != "":
		out = append(out, fmt.Sprintf("Service %s: spec.clusterIP is immutable", n))
	}
	if oldT != newT {
		switch {
		case orDefault(oldT, "ClusterIP") == orDefault(newT, "ClusterIP"):
		case oldT == "LoadBalancer":
			out = append(out, fmt.Sprintf("Service %s: type changes from LoadBalancer to %s: its external load balancer and address are released, and clients using that address lose access",
				n, md(orDefault(newT, "ClusterIP"))))
		default:
			out = append(out, fmt.Sprintf("Service %s: type changes from %s to %s; clients of the old type lose access", n, md(orDefault(oldT, "ClusterIP")), md(orDefault(newT, "ClusterIP"))))
		}
	}
	oldPorts, newPorts := ports(bo), ports(ho)
	for _, p := range oldPorts {
		if !slices.Contains(newPorts, p) {
			out = append(out, fmt.Sprintf("Service %s: port %s is removed", n, p))
		}
	}
	if !reflect.DeepEqual(get(bo.Obj, "spec", "selector"), get(ho.Obj, "spec", "selector")) {
		out = append(out, fmt.Sprintf("Service %s: its selector changes: traffic goes to other pods", n))
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func ports(o object) []string {
	l, _ := get(o.Obj, "spec", "ports").([]any)
	var out []string
	for _, p := range l {
		out = append(out, md(fmt.Sprintf("%v/%v", get(p, "port"), orDefault(str(get(p, "protocol")), "TCP"))))
	}
	return out
}

// persistenceChanged reports whether any value under a key named
// persistence (or a volume size) differs.
func persistenceChanged(a, b any, key string) bool {
	if strings.Contains(strings.ToLower(key), "persistence") || strings.EqualFold(key, "size") && key != "" {
		return !reflect.DeepEqual(a, b)
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		return false
	}
	for k := range am {
		if persistenceChanged(am[k], bm[k], k) {
			return true
		}
	}
	for k := range bm {
		if _, ok := am[k]; !ok && persistenceChanged(nil, bm[k], k) {
			return true
		}
	}
	return false
}

package review

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// dangers lists changes Kubernetes will reject or that destroy things.
func dangers(apps []*appChange, base, head map[string]object) []string {
	var out []string
	for _, a := range apps {
		if a.status == "removed" {
			out = append(out, fmt.Sprintf("app `%s` is removed: Flux prunes every object it created", a.key))
		}
	}
	for _, id := range unionKeys(base, head) {
		bo, bok := base[id]
		ho, hok := head[id]
		switch {
		case bok && !hok:
			switch bo.Kind {
			case "HelmRelease":
				out = append(out, fmt.Sprintf("addon `%s` is removed: the chart is uninstalled and its data volumes may be deleted", bo.Namespace+"/"+bo.Name))
			case "Namespace":
				out = append(out, fmt.Sprintf("namespace `%s` is removed: everything in it is deleted", bo.Name))
			case "PersistentVolumeClaim":
				out = append(out, fmt.Sprintf("volume claim `%s` is removed: its data is lost", bo.Namespace+"/"+bo.Name))
			default:
				if layout.AppOf(bo.File) != "" && !slices.Contains(out, "app `"+layout.AppOf(bo.File)+"` is removed: Flux prunes every object it created") && bo.Kind == "Deployment" {
					out = append(out, fmt.Sprintf("workload `%s` is removed: Flux prunes it", bo.Namespace+"/"+bo.Name))
				}
			}
		case bok && hok:
			out = append(out, immutable(bo, ho)...)
		}
	}
	return out
}

func immutable(bo, ho object) []string {
	name := "`" + bo.Namespace + "/" + bo.Name + "`"
	var out []string
	changed := func(path ...any) bool { return !reflect.DeepEqual(get(bo.Obj, path...), get(ho.Obj, path...)) }
	switch bo.Kind {
	case "Deployment", "StatefulSet", "DaemonSet":
		if changed("spec", "selector") {
			out = append(out, fmt.Sprintf("%s %s: spec.selector is immutable; the apply will be rejected (the workload must be recreated)", bo.Kind, name))
		}
	case "Service":
		if changed("spec", "clusterIP") && str(get(bo.Obj, "spec", "clusterIP")) != "" {
			out = append(out, fmt.Sprintf("Service %s: spec.clusterIP is immutable", name))
		}
		if changed("spec", "type") {
			out = append(out, fmt.Sprintf("Service %s: type changes from %v to %v; clients of the old type lose access", name, get(bo.Obj, "spec", "type"), get(ho.Obj, "spec", "type")))
		}
		oldPorts, newPorts := ports(bo), ports(ho)
		for _, p := range oldPorts {
			if !slices.Contains(newPorts, p) {
				out = append(out, fmt.Sprintf("Service %s: port %s is removed", name, p))
			}
		}
	case "HelmRelease":
		if changed("spec", "chart", "spec", "chart") || changed("spec", "releaseName") {
			out = append(out, fmt.Sprintf("HelmRelease %s: the chart or release name changes: Helm installs a new release and the old one's data may be lost", name))
		}
		if persistenceChanged(get(bo.Obj, "spec", "values"), get(ho.Obj, "spec", "values"), "") {
			out = append(out, fmt.Sprintf("HelmRelease %s: persistence settings change; volume claims are mostly immutable and a resize may be rejected", name))
		}
	case "PersistentVolumeClaim":
		if changed("spec") {
			out = append(out, fmt.Sprintf("PersistentVolumeClaim %s: its spec changes; most of it is immutable", name))
		}
	}
	return out
}

func ports(o object) []string {
	l, _ := get(o.Obj, "spec", "ports").([]any)
	var out []string
	for _, p := range l {
		out = append(out, fmt.Sprintf("%v/%v", get(p, "port"), get(p, "protocol")))
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

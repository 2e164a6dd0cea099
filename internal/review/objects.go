package review

import (
	"path"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// object is one Kubernetes object of a fleet, with its identity
// (fleet.ObjectID): every object review judges is read by the fleet's
// one reader (fleet.ReadObjects) or identified by it (fleet.NewObject).
type object struct {
	fleet.Object
	// Patched says Obj is what kustomize builds with the patches of the
	// folder's kustomization.yaml, which differs from File's object.
	Patched bool
}

// inCluster scopes a key (a namespace, a workload) to a cluster; a file
// outside every cluster's folder is in cluster "".
func inCluster(cluster, key string) string {
	if cluster == "" {
		return key
	}
	return cluster + ":" + key
}

func (o object) label() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// parseFleet reads every object of a fleet by its key, skipping
// kustomization.yaml files, release files and the Flux files that skip
// says are read already.
func parseFleet(files map[string][]byte, skip ...func(string) bool) map[string]object {
	out := map[string]object{}
	for o := range fleet.ReadObjects(files, func(p string) bool {
		return strings.HasSuffix(p, "/kustomization.yaml") || isReleaseFile(p) || len(skip) > 0 && skip[0](p)
	}) {
		out[o.Key()] = object{Object: o}
	}
	return out
}

// isReleaseFile reports whether p is the release file of an app in an
// environment (layout.ReleaseFile): a record, not an object Flux applies.
func isReleaseFile(p string) bool {
	return path.Base(p) == layout.ReleaseFileName && !layout.InComponentDir(p) && layout.AppOf(p) != ""
}

// get walks a path of map keys and list indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func labelOf(o object, key string) string {
	return str(get(o.Obj, "metadata", "labels", key))
}

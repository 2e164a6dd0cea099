package review

import (
	"bytes"
	"path"
	"strconv"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// object is one Kubernetes object of a fleet file.
type object struct {
	File       string
	Kind, Name string
	Namespace  string
	Obj        map[string]any
	// Patched says Obj is what kustomize builds with the patches of the
	// folder's kustomization.yaml, which differs from File's object.
	Patched bool
}

// id names the object in the fleet: its kind, namespace and name on its
// cluster. Two environments' copies of an app are objects of one kind,
// namespace and name on two clusters: two objects.
func (o object) id() string { return objectID(o.cluster(), o.Kind, o.Namespace, o.Name) }

// objectID is the id of the object of kind, namespace and name on cluster.
func objectID(cluster, kind, namespace, name string) string {
	return inCluster(cluster, kind+"/"+namespace+"/"+name)
}

// inCluster scopes a key (a namespace, an object) to a cluster; a file
// outside every cluster's folder is in cluster "".
func inCluster(cluster, key string) string {
	if cluster == "" {
		return key
	}
	return cluster + ":" + key
}

// cluster is the cluster the object is applied to (clusterOfFile).
func (o object) cluster() string { return clusterOfFile(o.File) }

// clusterOfFile is the cluster whose folder holds a fleet file: apps/<c>/…
// (layout.AppsDir) or clusters/<c>/… (layout.DefaultClusterDir); "" for a
// file elsewhere (a cluster whose platform.yaml path is another folder).
func clusterOfFile(p string) string {
	if l := layout.Parse(p); l.Preview == 0 {
		return l.Cluster
	}
	return ""
}

func (o object) label() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// parseFleet reads every object of a fleet, skipping kustomization.yaml files
// and the Flux files that skip says are read already.
func parseFleet(files map[string][]byte, skip ...func(string) bool) map[string]object {
	out := map[string]object{}
	for p, b := range files {
		if strings.HasSuffix(p, "/kustomization.yaml") || isReleaseFile(p) || len(skip) > 0 && skip[0](p) {
			continue
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			docs, err := yamlx.Parse(doc)
			if err != nil || len(docs) == 0 || docs[0].Root == nil || docs[0].Root.Kind != yamlx.MapNode {
				continue
			}
			m := value(docs[0].Root).(map[string]any)
			md, _ := m["metadata"].(map[string]any)
			o := object{File: p, Obj: m}
			o.Kind, _ = m["kind"].(string)
			o.Name, _ = md["name"].(string)
			o.Namespace, _ = md["namespace"].(string)
			out[o.id()] = o
		}
	}
	return out
}

// isReleaseFile reports whether p is the release file of an app in an
// environment (layout.ReleaseFile): a record, not an object Flux applies.
func isReleaseFile(p string) bool {
	return path.Base(p) == layout.ReleaseFileName && !layout.InComponentDir(p) && layout.AppOf(p) != ""
}

// value returns n as encoding/json would decode its JSON: maps, lists,
// strings, float64, bools and nil.
func value(n *yamlx.Node) any {
	switch n.Kind {
	case yamlx.MapNode:
		m := make(map[string]any, len(n.Kids)/2)
		for i := 0; i < len(n.Kids); i += 2 {
			m[n.Kids[i].Str] = value(n.Kids[i+1])
		}
		return m
	case yamlx.SeqNode:
		l := make([]any, len(n.Kids))
		for i, k := range n.Kids {
			l[i] = value(k)
		}
		return l
	}
	switch n.Tag {
	case yamlx.NullTag:
		return nil
	case yamlx.BoolTag:
		return n.Str == "true"
	case yamlx.IntTag, yamlx.FloatTag:
		f, _ := strconv.ParseFloat(n.Str, 64)
		return f
	}
	return n.Str
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

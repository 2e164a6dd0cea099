package review

import (
	"bytes"
	"strings"

	"sigs.k8s.io/yaml"
)

// object is one Kubernetes object of a fleet file.
type object struct {
	File       string
	Kind, Name string
	Namespace  string
	Obj        map[string]any
}

func (o object) id() string { return o.Kind + "/" + o.Namespace + "/" + o.Name }

func (o object) label() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// parseFleet reads every object of a fleet, skipping kustomization.yaml files.
func parseFleet(files map[string][]byte) map[string]object {
	out := map[string]object{}
	for p, b := range files {
		if strings.HasSuffix(p, "/kustomization.yaml") {
			continue
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			var m map[string]any
			if err := yaml.Unmarshal(doc, &m); err != nil || m == nil {
				continue
			}
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

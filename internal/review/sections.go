package review

import (
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet"
)

// details is a collapsible section around a diff: head is the comment's
// own HTML, title and file are values from the fleet; the diff is shown
// in a fence longer than any run of backticks it holds.
func details(head, title, file, diff string) string {
	return fmt.Sprintf("<details><summary>%s %s <code>%s</code></summary>\n\n%s\n</details>\n\n", head, html(title), html(file), fenced("diff", diff))
}

// unified is the unified diff of two texts under one label; nil is no
// file (an addition or a removal).
func unified(label string, old, new []byte) string {
	op := fleet.Update
	switch {
	case old == nil && new == nil:
		return ""
	case old == nil:
		op = fleet.Add
	case new == nil:
		op = fleet.Delete
	}
	return fleet.FileDiff(fleet.Change{Path: label, Op: op, Old: old, New: new}, "")
}

// index finds the objects the sections need without scanning both
// fleets for each: by file, and the workloads of each namespace.
type index struct {
	byFile [2]map[string][]object // base, head
	pods   map[string][]object    // namespace → workloads of both sides
	sorted map[string]bool        // namespaces whose pods are sorted
}

func newIndex(base, head map[string]object) *index {
	ix := &index{byFile: [2]map[string][]object{{}, {}}, pods: map[string][]object{}, sorted: map[string]bool{}}
	for i, objs := range []map[string]object{head, base} {
		for _, o := range objs {
			ix.byFile[1-i][o.File] = append(ix.byFile[1-i][o.File], o)
			if _, ok := podSpecPaths[o.Kind]; ok {
				ns := inCluster(o.OnCluster(), o.Namespace)
				ix.pods[ns] = append(ix.pods[ns], o)
			}
		}
	}
	return ix
}

// podsOf returns the workloads of a namespace, head before base, by id.
func (ix *index) podsOf(ns string) []object {
	l := ix.pods[ns]
	if !ix.sorted[ns] {
		slices.SortStableFunc(l, func(a, b object) int { return strings.Compare(a.Key(), b.Key()) })
		ix.sorted[ns] = true
	}
	return l
}

// fileObject returns the one object a file holds on a side (0 base, 1
// head), if it holds one.
func (ix *index) fileObject(p string, side int) (object, bool) {
	l := ix.byFile[side][p]
	if len(l) != 1 {
		return object{}, false
	}
	return l[0], true
}

// without returns a copy of a map without some keys.
func without(m map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

// configMapDiff shows a ConfigMap's change file by file: the unified diff
// of each key's text (labelled with the path a workload mounts it at, when
// one does), rather than of the YAML-escaped strings, after the diff of
// the rest of the object.
func configMapDiff(ch fleet.Change, bo, ho *object, mounts map[string]string) string {
	var b strings.Builder
	var oldM, newM map[string]any
	if bo != nil {
		oldM = bo.Obj
	}
	if ho != nil {
		newM = ho.Obj
	}
	var oldRest, newRest []byte
	if oldM != nil {
		oldRest = yamlOf(without(oldM, "data", "binaryData"))
	}
	if newM != nil {
		newRest = yamlOf(without(newM, "data", "binaryData"))
	}
	if string(oldRest) != string(newRest) {
		b.WriteString(unified(ch.Path, oldRest, newRest))
	}
	for _, field := range []string{"data", "binaryData"} {
		od, _ := get(oldM, field).(map[string]any)
		nd, _ := get(newM, field).(map[string]any)
		for _, key := range unionKeys(od, nd) {
			ov, ook := od[key]
			nv, nok := nd[key]
			if ook && nok && reflect.DeepEqual(ov, nv) {
				continue
			}
			label := key
			if m := mounts[key]; m != "" {
				label = m
			}
			if field == "binaryData" {
				fmt.Fprintf(&b, "# binary file %s: %s → %s\n", label, size(ov, ook), size(nv, nok))
				continue
			}
			var old, new []byte
			if ook {
				old = []byte(fmt.Sprint(ov))
			}
			if nok {
				new = []byte(fmt.Sprint(nv))
			}
			b.WriteString(unified(label, old, new))
		}
	}
	return b.String()
}

func size(v any, ok bool) string {
	if !ok {
		return "—"
	}
	return fmt.Sprintf("%d base64 characters", len(str(v)))
}

// mountPaths returns where the workloads of a namespace mount the keys of
// a ConfigMap: key → path in the container, through the pod's configMap
// volumes, their items and the containers' mounts (with or without
// subPath).
func (ix *index) mountPaths(cm object) map[string]string {
	out := map[string]string{}
	keys, _ := cm.Obj["data"].(map[string]any)
	for _, o := range ix.podsOf(inCluster(cm.OnCluster(), cm.Namespace)) {
		ps := podSpec(o)
		vols, _ := get(ps, "volumes").([]any)
		for _, v := range vols {
			if str(get(v, "configMap", "name")) == cm.Name {
				addMounts(out, ps, v, keys)
			}
		}
	}
	return out
}

// addMounts records where a pod's containers mount the keys of one
// configMap volume.
func addMounts(out map[string]string, ps, v any, keys map[string]any) {
	items := map[string]string{} // key → path in the volume
	if l, ok := get(v, "configMap", "items").([]any); ok {
		for _, it := range l {
			items[str(get(it, "key"))] = str(get(it, "path"))
		}
	} else {
		for k := range keys {
			items[k] = k
		}
	}
	for _, list := range []string{"initContainers", "containers"} {
		cs, _ := get(ps, list).([]any)
		for _, c := range cs {
			vms, _ := get(c, "volumeMounts").([]any)
			for _, vm := range vms {
				if str(get(vm, "name")) != str(get(v, "name")) {
					continue
				}
				mp, sub := str(get(vm, "mountPath")), str(get(vm, "subPath"))
				for key, ip := range items {
					switch {
					case out[key] != "":
					case sub == "":
						out[key] = path.Join(mp, ip)
					case sub == ip:
						out[key] = mp
					}
				}
			}
		}
	}
}

// kustomizationDiff shows a kustomization.yaml's change with its patches
// as text: the diff of the rest of the file, then the diff of the patches,
// each with its target, so that a patch reads as the YAML it is rather
// than as an escaped string.
func kustomizationDiff(ch fleet.Change) string {
	var oldK, newK map[string]any
	if ch.Old != nil {
		if oldK = kustomizationOf(ch.Old); oldK == nil {
			return ""
		}
	}
	if ch.New != nil {
		if newK = kustomizationOf(ch.New); newK == nil {
			return ""
		}
	}
	if get(oldK, "patches") == nil && get(newK, "patches") == nil {
		return ""
	}
	var b strings.Builder
	var oldRest, newRest, oldP, newP []byte
	if oldK != nil {
		oldRest, oldP = yamlOf(without(oldK, "patches")), patchText(oldK)
	}
	if newK != nil {
		newRest, newP = yamlOf(without(newK, "patches")), patchText(newK)
	}
	if string(oldRest) != string(newRest) {
		b.WriteString(unified(ch.Path, oldRest, newRest))
	}
	b.WriteString(unified(ch.Path+" (patches)", oldP, newP))
	return b.String()
}

// patchText writes a kustomization's patches as text, one after the other.
func patchText(k map[string]any) []byte {
	l, _ := get(k, "patches").([]any)
	if len(l) == 0 {
		return nil
	}
	var b strings.Builder
	for i, p := range l {
		fmt.Fprintf(&b, "# patch %d", i+1)
		if t, ok := get(p, "target").(map[string]any); ok {
			var parts []string
			for _, f := range []string{"group", "version", "kind", "name", "namespace", "labelSelector", "annotationSelector"} {
				if v := str(t[f]); v != "" {
					parts = append(parts, f+"="+v)
				}
			}
			b.WriteString(" (target: " + strings.Join(parts, ", ") + ")")
		}
		if f := str(get(p, "path")); f != "" {
			b.WriteString(" from " + f)
		}
		b.WriteString("\n")
		if t := str(get(p, "patch")); t != "" {
			b.WriteString(t)
			if !strings.HasSuffix(t, "\n") {
				b.WriteString("\n")
			}
		}
	}
	return []byte(b.String())
}

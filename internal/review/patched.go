package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/kbuild"
)

// patchedDirs returns the folders whose kustomization.yaml has patches,
// sorted: their objects are what kustomize makes of the files.
func patchedDirs(files map[string][]byte) []string {
	var out []string
	for p, b := range files {
		if path.Base(p) != "kustomization.yaml" || !bytes.Contains(b, []byte("patches")) {
			continue
		}
		if k := kustomizationOf(b); k != nil && get(k, "patches") != nil {
			out = append(out, path.Dir(p))
		}
	}
	slices.Sort(out)
	return out
}

// kustomizationOf parses a kustomization.yaml, or returns nil.
func kustomizationOf(b []byte) map[string]any {
	k, ok := fleet.ReadObject(layout.Kustomization, b)
	if !ok {
		return nil
	}
	return k.Obj
}

// patched records a side's folders built by kustomize.
type patched struct {
	dirs []string
	errs map[string]string // folder → why it does not build
}

// applyPatches replaces the objects of every changed folder with patches
// by the objects kustomize builds from it, which is what Flux applies. An
// object a patch changes keeps its file and is marked patched; one it
// leaves alone stays as read. A folder with no changed file builds the
// same on both sides, so it is left as read (its objects cancel out).
func applyPatches(files map[string][]byte, objs map[string]object, changedDirs map[string]bool) patched {
	p := patched{errs: map[string]string{}}
	for _, dir := range patchedDirs(files) {
		if changedDirs[dir] {
			p.dirs = append(p.dirs, dir)
		}
	}
	for _, dir := range p.dirs {
		built, err := buildDir(files, dir)
		if err != nil {
			p.errs[dir] = err.Error()
			continue
		}
		raw := map[string]object{}
		for id, o := range objs {
			if path.Dir(o.File) == dir {
				raw[id] = o
				delete(objs, id)
			}
		}
		for _, m := range built {
			// An object a patch changes keeps its file: the folder, and
			// so the location, is the same.
			o := object{Object: fleet.NewObject(dir+"/"+layout.Kustomization, m)}
			if r, ok := raw[o.Key()]; ok {
				if reflect.DeepEqual(r.Obj, m) {
					objs[o.Key()] = r
					continue
				}
				o.File = r.File
			}
			o.Patched = true
			objs[o.Key()] = o
		}
	}
	return p
}

// buildDir builds a fleet folder with kustomize from the fleet's files in
// memory: no plugins, no files outside the folder, nothing fetched.
func buildDir(files map[string][]byte, dir string) (out []map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil { // a bad patch must not stop the review
			out, err = nil, fmt.Errorf("kustomize build %s failed: %v", dir, p)
		}
	}()
	fsys := filesys.MakeFsInMemory()
	for p, b := range files {
		if strings.HasPrefix(p, dir+"/") {
			if err := fsys.WriteFile("/"+p, b); err != nil {
				return nil, err
			}
		}
	}
	resMap, err := kbuild.Run(fsys, "/"+dir, true)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %s", dir, strings.ReplaceAll(err.Error(), "/"+dir+"/", ""))
	}
	for _, res := range resMap.Resources() {
		j, err := res.MarshalJSON()
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(j, &m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// patchedSection is the diff of a patched object as Flux applies it, or ""
// when that does not change.
func patchedSection(id string, base, head map[string]object) string {
	bo, bok := base[id]
	ho, hok := head[id]
	if !(bok && bo.Patched) && !(hok && ho.Patched) {
		return ""
	}
	var old, new []byte
	if bok {
		old = yamlOf(bo.Obj)
	}
	if hok {
		new = yamlOf(ho.Obj)
	}
	if string(old) == string(new) {
		return ""
	}
	o, verb := ho, "changed"
	switch {
	case !hok:
		o, verb = bo, "removed"
	case !bok:
		verb = "added"
	}
	label := o.label() + " as Flux applies it (kustomize build with the patches of " + path.Dir(o.File) + "/kustomization.yaml)"
	return details(verb+" — patched", label, o.File, unified(o.label(), old, new))
}

func yamlOf(m map[string]any) []byte {
	b, err := yaml.Marshal(m)
	if err != nil {
		return []byte(err.Error())
	}
	return b
}

package render

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/kbuild"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spec/validate"
	"github.com/fleetwright/fleetwright/internal/tenancy"
)

// CheckPatches builds every component with patches of a valid repository
// as Flux will (kustomize, with the project as the target namespace) and
// checks what the patches made of its objects against the tenancy rules
// (package tenancy): before kustomize runs, the patches' size bounds;
// after, the same objects, no forbidden kind, no pod beyond the project's
// Pod Security, no Ingress host the app does not own. Each problem is at
// the patch's line.
func CheckPatches(repo *load.Repo) load.Problems {
	var ps load.Problems
	var comps *generate.Components
	var hosts map[string]*tenancy.Hosts
	for _, a := range repo.Apps {
		for i := range a.Spec.Components {
			c := &a.Spec.Components[i]
			if c.WorkloadSpec == nil || len(c.WorkloadSpec.Patches) == 0 {
				continue
			}
			if comps == nil {
				comps = generate.NewComponents(repo, generate.Options{Platform: &repo.Platform})
				hosts = validate.HostRegistry(repo)
			}
			h := hosts[a.Cluster]
			t := tenancy.Tenant{App: a.App().AppRef, PodSecurity: repo.Platform.PodSecurityFor(a.Project),
				Hosts: func(host string) (bool, string) {
					if h == nil {
						return false, ""
					}
					return h.Owns(host, a.Doc.File)
				}}
			checkComponent(comps, a, i, t, &ps)
		}
	}
	return ps
}

// checkComponent checks the patches of component i of app a.
func checkComponent(comps *generate.Components, a *load.LoadedApp, i int, t tenancy.Tenant, ps *load.Problems) {
	c := &a.Spec.Components[i]
	at := load.Path{"components", i, "workload_spec", "patches"}
	dir, files, err := comps.Folder(a, c)
	if err != nil {
		ps.Add(a.Doc, at, "rendering the component to check its patches: %v", err)
		return
	}
	before, largest, err := unpatched(dir, files)
	if err != nil {
		ps.Add(a.Doc, at, "reading the component's objects: %v", err)
		return
	}
	decoded := make([]any, len(c.WorkloadSpec.Patches))
	budget := tenancy.NewBudget(largest)
	refused := false
	for j, p := range c.WorkloadSpec.Patches {
		if err := yaml.Unmarshal([]byte(p.Patch), &decoded[j]); err != nil {
			// What cannot be read as kustomize reads it cannot be bounded.
			ps.Add(a.Doc, at.Child(j).Child("patch"), "does not parse as kustomize reads it: %v", err)
			refused = true
			continue
		}
		if op, m := budget.Add(len(p.Patch), decoded[j]); m != "" {
			if op > 0 {
				m = fmt.Sprintf("operation %d %s", op, m)
			} else {
				m = "the patch " + m
			}
			ps.Add(a.Doc, at.Child(j).Child("patch"), "%s", m)
			refused = true
		}
	}
	if refused {
		return // never hand kustomize what could exhaust memory
	}
	after, err := buildFolder(dir, files, a.Project, -1)
	if err != nil {
		ps.Add(a.Doc, at, "%v", err)
		return
	}
	for _, p := range tenancy.CheckPatched(before, after, t) {
		j := blame(c.WorkloadSpec.Patches, decoded, p)
		ps.Add(a.Doc, at.Child(j), "%s", tenancy.Text(p))
	}
	// A patch without which kustomize builds the same objects changes
	// nothing: it selects nothing, or its fields do not reach the objects
	// (a strategic merge list entry that misses its merge keys), or it sets
	// what is there already. Each is a patch its author believes works.
	for j := range c.WorkloadSpec.Patches {
		without, err := buildFolder(dir, files, a.Project, j)
		if err != nil {
			continue // a later patch needs this one: it does something
		}
		if reflect.DeepEqual(without, after) {
			ps.Add(a.Doc, at.Child(j).Child("patch"), "changes nothing: kustomize builds the same objects without it; check that it names the objects (kind, metadata.name or target) and fields the component renders, and that it sets a value they do not have")
		}
	}
}

// unpatched decodes the objects of a component's folder, as render wrote
// them, and returns the size of the largest's JSON.
func unpatched(dir string, files []generate.File) ([]tenancy.Object, int, error) {
	var out []tenancy.Object
	largest := 0
	for _, f := range files {
		if path.Base(f.Path) == layout.Kustomization || path.Dir(f.Path) != dir {
			continue
		}
		j, err := yaml.YAMLToJSON(f.Data)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", f.Path, err)
		}
		var o tenancy.Object
		if err := json.Unmarshal(j, &o); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", f.Path, err)
		}
		largest = max(largest, len(j))
		out = append(out, o)
	}
	return out, largest, nil
}

// buildFolder builds a component's folder with kustomize from memory, as
// kustomize-controller does with the component's Flux Kustomization: the
// project as the target namespace, no plugins, nothing outside the folder.
// skip ≥ 0 leaves that patch out.
func buildFolder(dir string, files []generate.File, namespace string, skip int) (out []tenancy.Object, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("kustomize build of the component's folder failed: %v", p)
		}
	}()
	fsys := filesys.MakeFsInMemory()
	for _, f := range files {
		data := f.Data
		if path.Base(f.Path) == layout.Kustomization {
			var k map[string]any
			if err := yaml.Unmarshal(f.Data, &k); err != nil {
				return nil, err
			}
			k["namespace"] = namespace // the Flux Kustomization's targetNamespace
			if list, ok := k["patches"].([]any); ok && skip >= 0 && skip < len(list) {
				k["patches"] = slices.Delete(slices.Clone(list), skip, skip+1)
			}
			if data, err = yaml.Marshal(k); err != nil {
				return nil, err
			}
		}
		if err := fsys.WriteFile("/"+f.Path, data); err != nil {
			return nil, err
		}
	}
	resMap, err := kbuild.Run(fsys, "/"+dir, true)
	if err != nil {
		return nil, fmt.Errorf("kustomize build of the component's folder, as Flux will run it: %s", strings.ReplaceAll(err.Error(), "/"+dir+"/", ""))
	}
	for _, res := range resMap.Resources() {
		j, err := res.MarshalJSON()
		if err != nil {
			return nil, err
		}
		var m tenancy.Object
		if err := json.Unmarshal(j, &m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// blame returns the patch a problem comes from: one selecting the object
// that names the field, else the first selecting the object, else the
// first that names the field, else the first.
func blame(patches []spec.Patch, decoded []any, p tenancy.Problem) int {
	kind, name, _ := strings.Cut(p.Object, "/")
	selects := func(j int) bool {
		t := patches[j].Target
		if t == nil {
			m, _ := decoded[j].(map[string]any)
			md, _ := m["metadata"].(map[string]any)
			k, _ := m["kind"].(string)
			n, _ := md["name"].(string)
			return n == name && (k == kind || p.Path == "kind")
		}
		return matches(t.Name, name) && (p.Path == "kind" || matches(t.Kind, kind))
	}
	first := -1
	for j := range patches {
		if selects(j) && tenancy.Touches(decoded[j], p.Path) {
			return j
		}
		if first < 0 && selects(j) {
			first = j
		}
	}
	if first >= 0 {
		return first
	}
	for j := range patches {
		if tenancy.Touches(decoded[j], p.Path) {
			return j
		}
	}
	return 0
}

// matches reports whether a kustomize target field (an anchored regular
// expression; "" matches all) matches s.
func matches(re, s string) bool {
	if re == "" {
		return true
	}
	ok, err := regexp.MatchString("^(?:"+re+")$", s)
	return err == nil && ok
}

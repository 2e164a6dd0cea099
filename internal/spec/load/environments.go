package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// environments returns the copies of the loaded app a, one per environment
// it deploys to, each on its environment's cluster with its components
// merged with the environment's overrides. An override is checked as if
// the merged component were written there: a problem that a merged value
// causes points at the override. base holds the problems of a itself,
// which the copies do not report again. Without platform environments it
// returns a.
func (l *Loader) environments(fsys fs.FS, a *LoadedApp, plat *spec.Platform, base Problems, ps *Problems) []*LoadedApp {
	if len(plat.Environments) == 0 {
		// The preview key alone needs no platform environments.
		for _, name := range slices.Sorted(maps.Keys(a.Spec.Environments)) {
			if name != spec.PreviewEnvironment {
				ps.AddKey(a.Doc, Path{"environments"}, "platform.yaml declares no environments; declare them there, or remove this block")
				return []*LoadedApp{a}
			}
		}
		if ae := a.Spec.Environments[spec.PreviewEnvironment]; ae != nil && len(ae.Components) > 0 {
			ps.AddKey(a.Doc, Path{"environments", spec.PreviewEnvironment, "components"}, "previews take the app as written; only enabled is read here")
			return nil
		}
		return []*LoadedApp{a}
	}
	top, _ := a.Doc.Value.(map[string]any)
	envs, _ := top["environments"].(map[string]any)
	names := plat.EnvironmentNames()
	componentNames := make([]string, 0, len(a.Spec.Components))
	index := map[string]int{}
	for i, c := range a.Spec.Components {
		if _, dup := index[c.Name]; !dup && c.Name != "" {
			index[c.Name] = i
			componentNames = append(componentNames, c.Name)
		}
	}
	ok := true
	for _, name := range slices.Sorted(maps.Keys(envs)) {
		at := Path{"environments", name}
		if name == spec.PreviewEnvironment {
			if ae := a.Spec.Environments[name]; ae != nil && len(ae.Components) > 0 {
				ps.AddKey(a.Doc, at.Child("components"), "previews take the app as written; only enabled is read here")
				ok = false
			}
			continue
		}
		if plat.EnvironmentByName(name) == nil {
			msg := fmt.Sprintf("unknown environment %q; platform.yaml declares %s", name, strings.Join(names, ", "))
			if sug := suggest(name, names); sug != "" {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			}
			ps.AddKey(a.Doc, at, "%s", msg)
			ok = false
			continue
		}
		ae := a.Spec.Environments[name]
		if ae == nil {
			continue
		}
		for _, c := range slices.Sorted(maps.Keys(ae.Components)) {
			cat := at.Child("components").Child(c)
			i, known := index[c]
			if !known {
				msg := fmt.Sprintf("unknown component %q; the app has %s", c, strings.Join(componentNames, ", "))
				if sug := suggest(c, componentNames); sug != "" {
					msg += fmt.Sprintf("; did you mean %q?", sug)
				}
				ps.AddKey(a.Doc, cat, "%s", msg)
				ok = false
				continue
			}
			if n, has := ae.Components[c]["name"]; has && n != a.Spec.Components[i].Name {
				ps.Add(a.Doc, cat.Child("name"), "an override cannot rename its component")
				ok = false
			}
		}
	}
	enabled := func(name string) bool {
		ae := a.Spec.Environments[name]
		return ae == nil || ae.Enabled == nil || *ae.Enabled
	}
	var out []*LoadedApp
	for _, e := range plat.Environments {
		if !enabled(e.Name) {
			continue
		}
		if e.PromoteFrom != "" && !enabled(e.PromoteFrom) {
			ps.Add(a.Doc, Path{"environments", e.PromoteFrom, "enabled"}, "%s is promoted from %s: an app in %s needs %s too; disable %s as well, or enable %s",
				e.Name, e.PromoteFrom, e.Name, e.PromoteFrom, e.Name, e.PromoteFrom)
			ok = false
		}
		c := l.inEnvironment(fsys, a, plat, &e, envs, index, base, ps)
		if c == nil {
			ok = false
		}
		out = append(out, c)
	}
	if !ok {
		return nil
	}
	if len(out) == 0 && len(base) == 0 {
		ps.WarnKey(a.Doc, Path{"environments"}, "the app is enabled in no environment: it deploys nowhere")
	}
	return out
}

// inEnvironment returns a's copy for environment e, nil when its overrides
// make it invalid (the problems say where).
func (l *Loader) inEnvironment(fsys fs.FS, a *LoadedApp, plat *spec.Platform, e *spec.Environment, envs map[string]any, index map[string]int, base Problems, ps *Problems) *LoadedApp {
	c := *a
	c.Cluster, c.Environment = e.Cluster, e.Name
	env, _ := envs[e.Name].(map[string]any)
	written, _ := env["components"].(map[string]any)
	overrides := make(map[string]any, len(written))
	for name, v := range written {
		if _, known := index[name]; known { // environments reports the others
			overrides[name] = v
		}
	}
	if len(overrides) == 0 {
		l.replicasPolicy(&c, plat, nil, ps)
		return &c
	}
	doc, paths, err := mergedDocument(a.Doc, e.Name, overrides, index)
	if err != nil {
		ps.Add(a.Doc, Path{"environments", e.Name, "components"}, "merging the overrides: %v", err)
		return nil
	}
	c.Doc = doc
	c.Spec = spec.App{}
	c.written = a
	var own Problems
	l.schemas.check(l.schemas.app, doc, &own)
	decode(doc, &c.Spec)
	l.checks.App(&c, plat, &own)
	l.readFromFiles(fsys, &c, &own)
	seen := make(map[string]bool, len(base))
	for _, p := range base {
		seen[p.Path+"\x00"+p.Message] = true
	}
	bad := false
	for _, p := range own {
		if seen[p.Path+"\x00"+p.Message] {
			continue
		}
		comp, rest := splitComponentPath(p.Path)
		switch to, at := paths.at(comp, rest, posOf(p)); {
		case at:
			p.Path = to
		default:
			// A merged value the override did not write went wrong: say
			// so at the override.
			root := Path{"environments", e.Name}
			if name, ok := paths.names[comp]; ok {
				root = root.Child("components").Child(name)
			}
			p.Message = fmt.Sprintf("with %s's override, %s: %s", e.Name, p.Path, p.Message)
			p.Path = root.String()
			setPos(p, doc.KeyPos(root))
		}
		bad = bad || p.Severity != diag.Warning
		*ps = append(*ps, p)
	}
	if bad {
		return nil
	}
	l.replicasPolicy(&c, plat, paths, ps)
	return &c
}

// replicasPolicy runs on an environment's copy of an app the policy check
// that depends on its cluster (checkReplicasPolicy; the app as written was
// checked on none), at the override that set the count when one did.
func (l *Loader) replicasPolicy(c *LoadedApp, plat *spec.Platform, paths *overridePaths, ps *Problems) {
	var own Problems
	for i := range c.Spec.Components {
		l.checks.Replicas(c, &c.Spec.Components[i], Path{"components", i, "workload_spec"}, plat, &own)
	}
	for _, p := range own {
		if paths != nil {
			comp, rest := splitComponentPath(p.Path)
			if to, at := paths.at(comp, rest, posOf(p)); at {
				p.Path = to
			}
		}
		*ps = append(*ps, p)
	}
}

// overridePaths tells where the merged values of an environment's
// overrides came from.
type overridePaths struct {
	env   string
	names map[int]string // component index → name, for the overridden ones
	pos   map[Pos]bool   // positions of the overrides' values
}

// at returns the path, in the override, of a problem found at path
// components[comp]<rest> and pos, and whether the override wrote it.
func (o *overridePaths) at(comp int, rest string, pos Pos) (string, bool) {
	name, ok := o.names[comp]
	if !ok || !o.pos[pos] {
		return "", false
	}
	return Path{"environments", o.env, "components", name}.String() + rest, true
}

// splitComponentPath splits "components[2].workload_spec.port" into 2 and
// ".workload_spec.port"; -1 for a path outside the components.
func splitComponentPath(s string) (int, string) {
	rest, ok := strings.CutPrefix(s, "components[")
	if !ok {
		return -1, ""
	}
	n, tail, ok := strings.Cut(rest, "]")
	if !ok {
		return -1, ""
	}
	i := 0
	for _, r := range n {
		if r < '0' || r > '9' {
			return -1, ""
		}
		i = i*10 + int(r-'0')
	}
	return i, tail
}

// mergedDocument returns the document of the app with the overrides
// merged into its components: the merged values where they stand in the
// app, each at the position of what it was merged from, so that a problem
// of a value the override wrote points at the override.
func mergedDocument(d *Document, env string, overrides map[string]any, index map[string]int) (*Document, *overridePaths, error) {
	top, _ := d.Value.(map[string]any)
	comps, _ := top["components"].([]any)
	merged := slices.Clone(comps)
	basePos := d.allPositions()
	pos := maps.Clone(basePos)
	paths := &overridePaths{env: env, names: map[int]string{}, pos: map[Pos]bool{}}
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		i := index[name]
		b, err := spec.MergePatch(comps[i], overrides[name])
		if err != nil {
			return nil, nil, fmt.Errorf("component %s: %w", name, err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("component %s: %w", name, err)
		}
		merged[i] = v
		paths.names[i] = name
		from := pathKey(Path{"environments", env, "components", name})
		to := pathKey(Path{"components", i})
		for k, np := range basePos {
			if k == from || strings.HasPrefix(k, from+"/") {
				paths.pos[np.val], paths.pos[np.key] = true, true
			}
		}
		placeOverride(pos, basePos, overrides[name], from, to, "")
	}
	out := maps.Clone(top)
	out["components"] = merged
	return &Document{File: d.File, Value: out, pos: pos}, paths, nil
}

// placeOverride points the merged values an override wrote (v, at rest
// under from in the app and to in the merged component) at the override.
func placeOverride(pos, basePos map[string]nodePos, v any, from, to, rest string) {
	if m, ok := v.(map[string]any); ok {
		// A map merges into what is there: its keys are placed one by one.
		if _, has := pos[to+rest]; !has {
			pos[to+rest] = basePos[from+rest]
		}
		for k, x := range m {
			placeOverride(pos, basePos, x, from, to, rest+"/"+k)
		}
		return
	}
	// Anything else (null included) replaces what was there whole.
	for k := range pos {
		if k == to+rest || strings.HasPrefix(k, to+rest+"/") {
			delete(pos, k)
		}
	}
	if v == nil {
		return
	}
	for k, np := range basePos {
		if k == from+rest || strings.HasPrefix(k, from+rest+"/") {
			pos[to+k[len(from):]] = np
		}
	}
}

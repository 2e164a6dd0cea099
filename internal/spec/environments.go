package spec

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// Environments: platform.yaml lists the stages every app deploys through
// (each a cluster), and an app's environments block tailors it per stage
// with a JSON merge patch per component. The loader turns each app into
// one LoadedApp per environment it deploys to, its components merged with
// that environment's overrides, so that everything after loading (the
// graph, generate, verify, review) sees ordinary apps on their clusters.

// Environment is one stage of platform.yaml environments.
type Environment struct {
	// Name of the environment: a DNS-1123 label, such as staging or production. It labels every Flux object of its apps (fleetwright.io/environment) and their events.
	Name string `json:"name" jsonschema:"required,minLength=1,maxLength=63,example=staging"`
	// Cluster the environment deploys to, one of clusters; an environment is a cluster, and no two environments share one.
	Cluster string `json:"cluster" jsonschema:"required,minLength=1,maxLength=63,example=stage-eu"`
	// PromoteFrom names an earlier environment: this one then changes only by promotion (render promote --to <name>) of the release that runs there, never by a render of the apps repository.
	PromoteFrom string `json:"promote_from,omitempty" jsonschema:"example=staging"`
	// AutoPromote opens and merges the promotion as soon as the webhook reports the release running, every check green, in the promote_from environment (the auto-promote workflow of docs/environments.md).
	AutoPromote bool `json:"auto_promote,omitempty"`
}

// Previews configure the short-lived copies of the apps a pull request on
// the apps repository changes (render preview --pr N): each runs as
// environment pr-<N> on the previews' cluster, in the namespace
// <project>-pr<N>, with hosts under apps_domain (docs/environments.md,
// "Previews").
type Previews struct {
	// Cluster the previews deploy to: one of clusters (or of the environments' clusters). Their files go under previews/<cluster>/ in the fleet, apart from every environment's.
	Cluster string `json:"cluster" jsonschema:"required,minLength=1,maxLength=63,example=stage-eu"`
	// AppsDomain is the domain of the previews' hosts: an app's main host becomes <app>-<project>-pr<N>.<apps_domain>, another workload's <component>-<app>-<project>-pr<N>.<apps_domain>; a host the spec names is never used in a preview.
	AppsDomain string `json:"apps_domain" jsonschema:"required,minLength=1,example=preview.example.com"`
	// TTL is how long a preview lives after its last update, as a duration of at least 1h such as 72h (default 72h): any render removes the previews older than that.
	TTL string `json:"ttl,omitempty" jsonschema:"pattern=^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$,example=72h,default=72h"`
	// Max is the number of previews that may exist at once (default 20): a new one beyond it is refused, naming the open ones; an update of an open one is not.
	Max int `json:"max,omitempty" jsonschema:"minimum=1,example=20,default=20"`
}

// Defaults of platform.yaml previews.
const (
	DefaultPreviewTTL = 72 * time.Hour
	DefaultPreviewMax = 20
	// MinPreviewTTL is the shortest previews.ttl: a preview must outlive
	// the pull request's review of it.
	MinPreviewTTL = time.Hour
)

// JSONSchemaExtend gives the schema an example.
func (Previews) JSONSchemaExtend(s *jsonschema.Schema) {
	s.Examples = []any{map[string]any{"cluster": "stage-eu", "apps_domain": "preview.example.com", "ttl": "72h", "max": 20}}
}

// TTLDuration is previews.ttl as a duration, with its default.
func (p *Previews) TTLDuration() time.Duration {
	if d, err := time.ParseDuration(p.TTL); err == nil && d > 0 {
		return d
	}
	return DefaultPreviewTTL
}

// MaxOpen is previews.max, with its default.
func (p *Previews) MaxOpen() int {
	if p.Max > 0 {
		return p.Max
	}
	return DefaultPreviewMax
}

// PreviewEnvironment is the key of an app's environments block that opts
// the app in or out of previews.
const PreviewEnvironment = "preview"

// AppEnvironment tailors an app to one environment.
type AppEnvironment struct {
	// Enabled: false keeps the app out of the environment (default true).
	Enabled *bool `json:"enabled,omitempty"`
	// Components are overrides by component name: each a JSON merge patch (RFC 7386) over the component as written (keys replace, maps merge, lists are replaced whole, null removes a field), validated as if the merged component were written there.
	Components map[string]map[string]any `json:"components,omitempty"`
}

// JSONSchemaExtend gives the schema an example.
func (AppEnvironment) JSONSchemaExtend(s *jsonschema.Schema) {
	s.Examples = []any{map[string]any{"components": map[string]any{
		"api": map[string]any{"workload_spec": map[string]any{"replicas": 4, "ingress": map[string]any{"host": "api.example.com"}}},
	}}}
}

// JSONSchemaExtend gives the schema an example.
func (Environment) JSONSchemaExtend(s *jsonschema.Schema) {
	s.Examples = []any{map[string]any{"name": "production", "cluster": "prod-eu", "promote_from": "staging"}}
}

// EnvironmentByName returns the platform's environment of that name, or
// nil.
func (p *Platform) EnvironmentByName(name string) *Environment {
	for i := range p.Environments {
		if p.Environments[i].Name == name {
			return &p.Environments[i]
		}
	}
	return nil
}

// EnvironmentNames returns the platform's environments' names, in order.
func (p *Platform) EnvironmentNames() []string {
	var out []string
	for _, e := range p.Environments {
		out = append(out, e.Name)
	}
	return out
}

// EnvironmentOfCluster returns the environment that deploys to cluster, or
// nil.
func (p *Platform) EnvironmentOfCluster(cluster string) *Environment {
	for i := range p.Environments {
		if p.Environments[i].Cluster == cluster {
			return &p.Environments[i]
		}
	}
	return nil
}

// Rendered reports whether a render of the apps repository writes the
// environment: one without promote_from. The others change only by
// promotion.
func (e *Environment) Rendered() bool { return e.PromoteFrom == "" }

func (p *Platform) environmentNames() []string {
	names := make([]string, len(p.Environments))
	for i, e := range p.Environments {
		names[i] = e.Name
	}
	return names
}

// environmentClusters gives a platform that lists environments and no
// clusters the environments' clusters, in order.
func environmentClusters(p *Platform) {
	if len(p.Clusters) > 0 {
		return
	}
	for _, e := range p.Environments {
		if e.Cluster != "" && p.ClusterByName(e.Cluster) == nil {
			p.Clusters = append(p.Clusters, Cluster{Name: e.Cluster})
		}
	}
	if p.DefaultCluster == "" && len(p.Clusters) > 0 {
		p.DefaultCluster = p.Clusters[0].Name
	}
}

// checkEnvironments checks platform.yaml's environments: names unique,
// each on a declared cluster of its own, promote_from naming an earlier
// environment.
func checkEnvironments(p *Platform, doc *Document, ps *Problems) {
	declared := len(p.Clusters) > 0
	seen := map[string]int{}
	byCluster := map[string]int{}
	for i, e := range p.Environments {
		at := Path{"environments", i}
		if e.Name != "" {
			if m := checkNamespace(e.Name); m != "" {
				ps.Add(doc, at.Child("name"), "%s", m)
			} else if e.Name == PreviewEnvironment {
				ps.Add(doc, at.Child("name"), "%q is the name an app's environments block gives previews (platform.yaml previews); call the environment something else", e.Name)
			} else if n, ok := layout.PreviewOf(e.Name); ok {
				ps.Add(doc, at.Child("name"), "%q is the name of pull request #%d's preview (platform.yaml previews): a platform environment must not look like one; call it something else", e.Name, n)
			} else if j, dup := seen[e.Name]; dup {
				ps.Add(doc, at.Child("name"), "environment %q is declared twice (also environments[%d])", e.Name, j)
			} else {
				seen[e.Name] = i
			}
		}
		if e.Cluster != "" {
			switch j, dup := byCluster[e.Cluster]; {
			case declared && p.ClusterByName(e.Cluster) == nil:
				msg := fmt.Sprintf("unknown cluster %q; clusters declares %s", e.Cluster, strings.Join(p.ClusterNames(), ", "))
				if sug := suggest(e.Cluster, p.ClusterNames()); sug != "" {
					msg += fmt.Sprintf("; did you mean %q?", sug)
				}
				ps.Add(doc, at.Child("cluster"), "%s", msg)
			case dup:
				ps.Add(doc, at.Child("cluster"), "environments %s and %s both deploy to cluster %q: the fleet keeps an app's files and its namespace by cluster, project and name, so one cluster holds one environment; give each environment a cluster (or a virtual cluster) of its own",
					p.Environments[j].Name, e.Name, e.Cluster)
			default:
				byCluster[e.Cluster] = i
			}
		}
		if e.PromoteFrom != "" {
			j, ok := seen[e.PromoteFrom]
			switch {
			case e.PromoteFrom == e.Name:
				ps.Add(doc, at.Child("promote_from"), "an environment cannot be promoted from itself")
			case !ok || j >= i:
				msg := fmt.Sprintf("%q is not an earlier environment: promote_from names one listed before %s", e.PromoteFrom, e.Name)
				if earlier := p.environmentNames()[:i]; len(earlier) > 0 {
					msg += " (" + strings.Join(earlier, ", ") + ")"
					if sug := suggest(e.PromoteFrom, earlier); sug != "" {
						msg += fmt.Sprintf("; did you mean %q?", sug)
					}
				}
				ps.Add(doc, at.Child("promote_from"), "%s", msg)
			}
		}
		if e.AutoPromote && e.PromoteFrom == "" {
			ps.Add(doc, at.Child("auto_promote"), "auto_promote needs promote_from: the environment it promotes from")
		}
	}
	if p.Previews != nil {
		checkPreviews(p, doc, ps)
	}
	if len(p.Environments) > 0 && p.DefaultCluster != "" && p.EnvironmentOfCluster(p.DefaultCluster) == nil && doc.Has(Path{"default_cluster"}) {
		ps.Add(doc, Path{"default_cluster"}, "with environments, apps deploy to the environments' clusters; default_cluster %q is none of them", p.DefaultCluster)
	}
}

// environments returns the copies of the loaded app a, one per environment
// it deploys to, each on its environment's cluster with its components
// merged with the environment's overrides. An override is checked as if
// the merged component were written there: a problem that a merged value
// causes points at the override. base holds the problems of a itself,
// which the copies do not report again. Without platform environments it
// returns a.
func (l *Loader) environments(fsys fs.FS, a *LoadedApp, plat *Platform, base Problems, ps *Problems) []*LoadedApp {
	if len(plat.Environments) == 0 {
		// The preview key alone needs no platform environments.
		for _, name := range slices.Sorted(maps.Keys(a.Spec.Environments)) {
			if name != PreviewEnvironment {
				ps.AddKey(a.Doc, Path{"environments"}, "platform.yaml declares no environments; declare them there, or remove this block")
				return []*LoadedApp{a}
			}
		}
		if ae := a.Spec.Environments[PreviewEnvironment]; ae != nil && len(ae.Components) > 0 {
			ps.AddKey(a.Doc, Path{"environments", PreviewEnvironment, "components"}, "previews take the app as written; only enabled is read here")
			return nil
		}
		return []*LoadedApp{a}
	}
	top, _ := a.Doc.Value.(map[string]any)
	envs, _ := top["environments"].(map[string]any)
	names := plat.environmentNames()
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
		if name == PreviewEnvironment {
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
func (l *Loader) inEnvironment(fsys fs.FS, a *LoadedApp, plat *Platform, e *Environment, envs map[string]any, index map[string]int, base Problems, ps *Problems) *LoadedApp {
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
	c.Spec = App{}
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
		bad = bad || p.Severity != SeverityWarning
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
func (l *Loader) replicasPolicy(c *LoadedApp, plat *Platform, paths *overridePaths, ps *Problems) {
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
		b, err := mergePatch(comps[i], overrides[name])
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

// checkPreviews checks platform.yaml previews: a cluster of the platform,
// a DNS name whose preview hosts are public, a ttl of at least an hour.
// The schema checks max and that cluster and apps_domain are there.
func checkPreviews(p *Platform, doc *Document, ps *Problems) {
	pv := p.Previews
	at := Path{"previews"}
	if c := pv.Cluster; c != "" {
		var known []string
		switch {
		case len(p.Clusters) > 0:
			known = p.ClusterNames()
		case len(p.Environments) > 0:
			for _, e := range p.Environments {
				if e.Cluster != "" && !slices.Contains(known, e.Cluster) {
					known = append(known, e.Cluster)
				}
			}
		default:
			known = []string{cmp.Or(p.DefaultCluster, DefaultCluster)}
		}
		if !slices.Contains(known, c) {
			msg := fmt.Sprintf("unknown cluster %q; the platform's clusters are %s", c, strings.Join(known, ", "))
			if sug := suggest(c, known); sug != "" {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			}
			ps.Add(doc, at.Child("cluster"), "%s", msg)
		}
	}
	if d := pv.AppsDomain; d != "" {
		if !isSubdomain(d) {
			ps.Add(doc, at.Child("apps_domain"), "%q is not a valid DNS name", d)
		} else if m := PublicHostProblem("app-shop-pr1." + d); m != "" {
			ps.Add(doc, at.Child("apps_domain"), "preview hosts <app>-<project>-pr<N>.%s would not be public: %s", d, strings.TrimPrefix(m, "is "))
		}
	}
	if pv.TTL != "" {
		if d, err := time.ParseDuration(pv.TTL); err == nil && d < MinPreviewTTL {
			ps.Add(doc, at.Child("ttl"), "%s is shorter than 1h: a preview must outlive its review", pv.TTL)
		}
	}
}

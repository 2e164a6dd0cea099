package load

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/graph"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// Previews (platform.yaml previews): a pull request on the apps repository
// gets a copy of the apps it changes, and of the apps they reference, as
// environment pr-<N> (layout.PreviewEnvironment) on the previews' cluster.
// Each app is taken as written (no environment's overrides), once, and
// renders into its project's preview namespace <project>-pr<N>
// (layout.PreviewNamespace): its copy's Project is that namespace, so that
// every object, addon, service account and Flux object of the copy lands
// there, apart from the project's own, and PreviewProject names the
// project it belongs to (its labels and event annotations say that one).
// Every ingress host is the default one under previews.apps_domain: a host
// the spec names is never used, so that a preview never answers for
// production.

// Skipped is an app a preview leaves out, and why.
type Skipped struct {
	App    string // project/name
	Reason string
}

// Preview is what pull request PR's preview renders.
type Preview struct {
	PR int
	// Repo holds the apps' copies in the preview, in their preview
	// namespaces on the previews' cluster, with the preview's platform
	// (apps_domain the previews'); its Graph and Order are theirs.
	Repo *Repo
	// Build holds the same copies in their own projects: the images are
	// built and named from it as render names a project's (BuildNode maps
	// its nodes to Repo's).
	Build *Repo
	// Apps are the apps previewed (project/name), sorted.
	Apps []string
	// Skipped are the apps left out, sorted.
	Skipped []Skipped
}

// previewEnabled reports whether an app takes part in previews: not when
// its environments block says preview: {enabled: false}.
func previewEnabled(a *LoadedApp) bool {
	ae := a.Spec.Environments[spec.PreviewEnvironment]
	return ae == nil || ae.Enabled == nil || *ae.Enabled
}

// AsWritten returns the app as its spec is written, without an
// environment's overrides (its Cluster and Environment are those of a).
func (a *LoadedApp) AsWritten() *LoadedApp {
	if a.written != nil {
		return a.written
	}
	return a
}

// ProjectName is the project the app belongs to: its Project, or for a
// copy in a preview, the project whose preview namespace Project is.
func (a *LoadedApp) ProjectName() string {
	if a.PreviewProject != "" {
		return a.PreviewProject
	}
	return a.Project
}

// PreviewOf returns pull request pr's preview of the apps changed (each
// project/name; those the repository does not hold are ignored) and of
// the apps they reference by export_ref, each as written. An app with
// environments.preview.enabled: false is skipped, and so is an app that
// needs one. The problems are those of the copies (an ingress host too
// long under previews.apps_domain, say), at the specs' lines; with an
// error among them the preview cannot be rendered. repo must be valid and
// its platform declare previews.
func (l *Loader) PreviewOf(repo *Repo, pr int, changed []string) (*Preview, Problems) {
	pv := repo.Platform.Previews
	if pv == nil {
		return nil, Problems{{Severity: diag.Error, File: l.display(PlatformFileNames[0]), Path: "previews", Message: "platform.yaml declares no previews: add a previews block (docs/environments.md, \"Previews\")"}}
	}
	byName := map[string]*LoadedApp{}
	for _, a := range repo.Apps {
		k := a.Ref()
		if _, ok := byName[k]; !ok {
			byName[k] = a.AsWritten()
		}
	}
	// The apps changed, then those they reference, and who needs whom.
	needs := map[string][]string{}
	var queue []string
	seen := map[string]bool{}
	for _, k := range changed {
		if byName[k] != nil && !seen[k] {
			seen[k] = true
			queue = append(queue, k)
		}
	}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		a := byName[k]
		for _, ref := range appRefs(a) {
			t := a.App().Sibling(ref).Ref()
			if byName[t] == nil {
				continue
			}
			needs[k] = append(needs[k], t)
			if !seen[t] {
				seen[t] = true
				queue = append(queue, t)
			}
		}
	}
	// Opted out, and what needs what opted out.
	skipped := map[string]string{}
	for k := range seen {
		if !previewEnabled(byName[k]) {
			skipped[k] = "environments.preview.enabled: false"
		}
	}
	for changedAny := true; changedAny; {
		changedAny = false
		for _, k := range slices.Sorted(maps.Keys(seen)) {
			if _, ok := skipped[k]; ok {
				continue
			}
			for _, t := range needs[k] {
				if _, ok := skipped[t]; ok {
					skipped[k] = fmt.Sprintf("it references %s, which is not previewed", t)
					changedAny = true
					break
				}
			}
		}
	}
	p := &Preview{PR: pr}
	var kept []*LoadedApp
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		if r, ok := skipped[k]; ok {
			p.Skipped = append(p.Skipped, Skipped{App: k, Reason: r})
			continue
		}
		p.Apps = append(p.Apps, k)
		kept = append(kept, byName[k])
	}
	plat := previewPlatform(&repo.Platform, pr)
	var ps Problems
	p.Repo = &Repo{Platform: *plat, PlatformDoc: repo.PlatformDoc, Graph: graph.New()}
	p.Build = &Repo{Platform: *plat, PlatformDoc: repo.PlatformDoc, Graph: graph.New()}
	for _, a := range kept {
		c := previewCopy(a, pv.Cluster, pr)
		p.Repo.Apps = append(p.Repo.Apps, c)
		b := *c
		b.Project, b.PreviewProject = a.Project, ""
		p.Build.Apps = append(p.Build.Apps, &b)
	}
	for _, r := range []*Repo{p.Repo, p.Build} {
		slices.SortStableFunc(r.Apps, func(a, b *LoadedApp) int { return strings.Compare(a.Key(), b.Key()) })
	}
	l.checks.Repo(p.Repo, &ps)
	var buildPs Problems
	l.checks.Repo(p.Build, &buildPs)
	return p, ps.Sort()
}

// BuildNode returns the node of p.Repo (spec.NodeID) of a node of
// p.Build: the same component in the preview namespace.
func (p *Preview) BuildNode(node string) string {
	parts := strings.SplitN(node, "/", 3)
	if len(parts) != 3 {
		return node
	}
	return parts[0] + "/" + layout.PreviewNamespace(parts[1], p.PR) + "/" + parts[2]
}

// appRefs are the names of the other apps of its project that a's
// export_refs read from, sorted.
func appRefs(a *LoadedApp) []string {
	set := map[string]bool{}
	for i, c := range a.Spec.Components {
		if c.WorkloadSpec == nil {
			continue
		}
		for _, ref := range ExportRefs(&a.Spec, c.WorkloadSpec, i) {
			if ref.R.App != "" && ref.R.App != a.Spec.Name && ref.R.AddonInstanceID == "" {
				set[ref.R.App] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// previewPlatform is the platform a preview renders with: hosts under
// previews.apps_domain, and each project's settings (its pod security,
// its defaults) for its preview namespace too.
func previewPlatform(plat *spec.Platform, pr int) *spec.Platform {
	out := *plat
	out.AppsDomain = plat.Previews.AppsDomain
	out.Projects = make(map[string]*spec.ProjectSettings, 2*len(plat.Projects))
	for name, s := range plat.Projects {
		out.Projects[name] = s
		out.Projects[layout.PreviewNamespace(name, pr)] = s
	}
	return &out
}

// previewCopy is a's copy in pull request pr's preview on cluster: in its
// project's preview namespace, every ingress host the default one.
func previewCopy(a *LoadedApp, cluster string, pr int) *LoadedApp {
	c := *a
	c.written = nil
	c.Cluster = cluster
	c.Environment = layout.PreviewEnvironment(pr)
	c.PreviewProject = a.Project
	c.Project = layout.PreviewNamespace(a.Project, pr)
	c.Spec.Components = slices.Clone(a.Spec.Components)
	for i := range c.Spec.Components {
		comp := &c.Spec.Components[i]
		if comp.WorkloadSpec == nil || comp.WorkloadSpec.Ingress == nil || comp.WorkloadSpec.Ingress.Host == "" {
			continue
		}
		w := *comp.WorkloadSpec
		ing := *w.Ingress
		ing.Host = ""
		w.Ingress = &ing
		comp.WorkloadSpec = &w
	}
	return &c
}

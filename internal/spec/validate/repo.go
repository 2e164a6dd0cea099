package validate

import (
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/graph"
	"github.com/fleetwright/fleetwright/internal/hint"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

func (l *checker) checkRepo(repo *load.Repo, ps *load.Problems) {
	byKey := map[string]*load.LoadedApp{}
	var apps []*load.LoadedApp
	for _, a := range repo.Apps {
		if a.Spec.Name == "" || a.Project == "" {
			continue
		}
		if prev, dup := byKey[a.Key()]; dup {
			ps.Add(a.Doc, load.Path{"name"}, "app %q of project %q on cluster %q is also defined in %s", a.Spec.Name, a.Project, a.Cluster, prev.Doc.File)
			continue
		}
		byKey[a.Key()] = a
		apps = append(apps, a)
	}
	repo.Apps = apps

	checkNameClashes(apps, ps)
	l.checkServiceNames(apps, ps)
	checkServiceAccounts(apps, ps)

	checkHosts(apps, &repo.Platform, ps)

	type edgeAt struct {
		doc  *load.Document
		path load.Path
	}
	where := map[[2]string]edgeAt{}
	g := repo.Graph
	for _, a := range apps {
		for i, c := range a.Spec.Components {
			from := load.NodeID(a, c.Name)
			g.AddNode(from)
			for j, d := range c.DependsOn {
				if a.Component(d) != nil && d != c.Name {
					g.AddEdge(from, load.NodeID(a, d))
					where[[2]string{from, load.NodeID(a, d)}] = edgeAt{a.Doc, load.Path{"components", i, "depends_on", j}}
				}
			}
			if c.WorkloadSpec == nil {
				continue
			}
			for _, ref := range load.ExportRefs(&a.Spec, c.WorkloadSpec, i) {
				r, at := ref.R, ref.At
				if r.Component == "" || r.AddonInstanceID != "" {
					continue
				}
				target := a
				if r.App != "" && r.App != a.Spec.Name {
					target = byKey[a.App().Sibling(r.App).Key()]
					if target == nil {
						ps.Add(a.Doc, at.Child("app"), "%s", l.unknownApp(r.App, a, apps))
						continue
					}
					tc := target.Component(r.Component)
					if tc == nil {
						ps.Add(a.Doc, at.Child("component"), "%s", unknownComponent(r.Component, &target.Spec))
						continue
					}
					l.checkExportKey(a, tc, r.ExportKey, at.Child("export_key"), ps)
				}
				if target.Component(r.Component) == nil || (target == a && r.Component == c.Name) {
					continue
				}
				to := load.NodeID(target, r.Component)
				if _, ok := where[[2]string{from, to}]; !ok {
					where[[2]string{from, to}] = edgeAt{a.Doc, at}
				}
				g.AddEdge(from, to)
			}
		}
	}
	order, err := g.Order()
	if ce, ok := err.(*graph.CycleError); ok {
		at := where[[2]string{ce.Cycle[0], ce.Cycle[1]}]
		ps.Add(at.doc, at.path, "dependency cycle: %s", strings.Join(shortCycle(ce.Cycle), " -> "))
		return
	}
	repo.Order = order
}

func hostField(ing *spec.Ingress) string {
	if ing.Host != "" {
		return "host"
	}
	return "enabled"
}

func (l *checker) unknownApp(name string, a *load.LoadedApp, apps []*load.LoadedApp) string {
	var same []string
	for _, o := range apps {
		if o.Project == a.Project && o.Cluster == a.Cluster {
			same = append(same, o.Spec.Name)
		}
	}
	msg := fmt.Sprintf("no app %q in project %q on cluster %q", name, a.Project, a.Cluster)
	if sug := hint.Suggest(name, same); sug != "" {
		msg += fmt.Sprintf("; did you mean %q?", sug)
	}
	return msg
}

// shortCycle prints node ids as component names when the cycle stays in one
// app, else as app/component.
func shortCycle(ids []string) []string {
	out := make([]string, len(ids))
	oneApp := true
	appOf := func(id string) string { return id[:strings.LastIndexByte(id, '/')] }
	for _, id := range ids {
		if appOf(id) != appOf(ids[0]) {
			oneApp = false
		}
	}
	for i, id := range ids {
		parts := strings.Split(id, "/")
		if oneApp {
			out[i] = parts[len(parts)-1]
		} else {
			out[i] = parts[len(parts)-2] + "/" + parts[len(parts)-1]
		}
	}
	return out
}

package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/hint"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

func (l *checker) checkApp(a *load.LoadedApp, plat *spec.Platform, ps *load.Problems) {
	s, doc := &a.Spec, a.Doc
	if s.Name != "" {
		if m := load.CheckLabel(s.Name, 63); m != "" {
			ps.Add(doc, load.Path{"name"}, "app name %q %s", s.Name, m)
		}
	}
	l.checkAppEnv(a, plat, ps)
	checkAppVolumes(a, ps)
	checkRoutes(a, plat, ps)
	if len(s.Components) == 0 && s.Template == nil && doc.Has(load.Path{"name"}) {
		ps.Add(doc, nil, "an app needs at least one component (or a template)")
	}
	names := map[string]int{}
	for i := range s.Components {
		c := &s.Components[i]
		at := load.Path{"components", i}
		if c.Name == "" {
			continue
		}
		if j, dup := names[c.Name]; dup {
			ps.Add(doc, at.Child("name"), "duplicate component name %q (also components[%d])", c.Name, j)
			continue
		}
		names[c.Name] = i
		if m := load.CheckLabel(c.Name, 63); m != "" {
			ps.Add(doc, at.Child("name"), "component name %q %s", c.Name, m)
		} else if obj := layout.ObjectName(s.Name, c.Name); len(obj) > 63 {
			ps.Add(doc, at.Child("name"), "object name %q (app-component) is %d characters; Kubernetes allows 63", obj, len(obj))
		} else if c.Type == spec.TypeAddon && len(obj) > load.MaxReleaseName {
			ps.Add(doc, at.Child("name"), "Helm release name %q (app-component) is %d characters; Helm allows %d", obj, len(obj), load.MaxReleaseName)
		}
	}
	for i := range s.Components {
		c := &s.Components[i]
		at := load.Path{"components", i}
		for j, dep := range c.DependsOn {
			switch _, ok := names[dep]; {
			case dep == c.Name:
				ps.Add(doc, at.Child("depends_on").Child(j), "a component cannot depend on itself")
			case !ok:
				ps.Add(doc, at.Child("depends_on").Child(j), "%s", unknownComponent(dep, s))
			case slices.Index(c.DependsOn, dep) < j:
				ps.Add(doc, at.Child("depends_on").Child(j), "%q is listed twice", dep)
			case s.Components[names[dep]].Type == spec.TypeCronJob:
				ps.Add(doc, at.Child("depends_on").Child(j), "%q is a cronjob, which runs on its schedule and is never done: nothing can wait for it; depend on a job instead", dep)
			}
		}
		switch c.Type {
		case spec.TypeWorkload, spec.TypeJob, spec.TypeCronJob:
			if c.WorkloadSpec == nil {
				if !doc.Has(at.Child("workload_spec")) {
					ps.Add(doc, at, "a %s component needs workload_spec", c.Type)
				}
			} else {
				l.checkWorkload(a, c, at.Child("workload_spec"), plat, ps)
			}
			if c.AddonSpec != nil {
				ps.AddKey(doc, at.Child("addon_spec"), "a %s component takes workload_spec, not addon_spec", c.Type)
			}
		case spec.TypeAddon:
			if c.AddonSpec == nil {
				if !doc.Has(at.Child("addon_spec")) {
					ps.Add(doc, at, "an addon component needs addon_spec")
				}
			} else {
				l.checkAddon(a, c, at.Child("addon_spec"), plat, ps)
			}
			if c.WorkloadSpec != nil {
				ps.AddKey(doc, at.Child("workload_spec"), "an addon component takes addon_spec, not workload_spec")
			}
		}
	}
}

func unknownComponent(dep string, app *spec.App) string {
	known := make([]string, 0, len(app.Components))
	for _, c := range app.Components {
		known = append(known, c.Name)
	}
	slices.Sort(known)
	known = slices.Compact(known)
	msg := fmt.Sprintf("no component %q in app %q", dep, app.Name)
	if sug := hint.Suggest(dep, known); sug != "" {
		return msg + fmt.Sprintf("; did you mean %q?", sug)
	}
	if len(known) > 0 {
		msg += "; components: " + strings.Join(known, ", ")
	}
	return msg
}

// checkRepo runs the checks that need every app: duplicate apps, ingress
// hosts, references between apps, and the dependency graph.
// checkNameClashes reports apps whose generated names collide, which
// joining names with '-' allows: objects named app-component within a
// project's namespace ("x" with component "y-z" and "x-y" with "z"), Flux
// Kustomizations named project-app-component (and project-<project> for the
// namespace) in the cluster's flux namespace, and the file of an app's
// Kustomizations, <project>-<app>.yaml in the cluster's folder. Without this
// one app would silently overwrite the other's files and objects.
func checkNameClashes(apps []*load.LoadedApp, ps *load.Problems) {
	type owner struct {
		a         *load.LoadedApp
		component string // "" for the app itself or its project
	}
	describe := func(o owner) string {
		if o.component == "" {
			return fmt.Sprintf("app %s of project %s (%s)", o.a.Spec.Name, o.a.Project, o.a.Doc.File)
		}
		return fmt.Sprintf("component %s of app %s (%s)", o.component, o.a.Spec.Name, o.a.Doc.File)
	}
	objects := map[string]owner{}        // cluster/project/object name
	kustomizations := map[string]owner{} // cluster/Kustomization name
	appFiles := map[string]owner{}       // cluster/file name
	projects := map[string]bool{}
	for _, a := range apps {
		if !projects[a.Cluster+"/"+a.Project] {
			projects[a.Cluster+"/"+a.Project] = true
			kustomizations[a.Cluster+"/"+layout.ProjectFluxName(a.Project)] = owner{a: a}
		}
	}
	for _, a := range apps {
		file := layout.AppFileName(a.Project, a.Spec.Name)
		if prev, dup := appFiles[a.Cluster+"/"+file]; dup {
			ps.Add(a.Doc, load.Path{"name"}, "the Flux Kustomizations of this app go to %s, as those of %s do; rename one of the apps or projects", file, describe(prev))
		} else {
			appFiles[a.Cluster+"/"+file] = owner{a: a}
		}
		for i, c := range a.Spec.Components {
			at := load.Path{"components", i, "name"}
			obj := layout.ObjectName(a.Spec.Name, c.Name)
			if prev, dup := objects[a.Cluster+"/"+a.Project+"/"+obj]; dup && prev.a != a {
				// Their Kustomizations clash too; one problem says it.
				ps.Add(a.Doc, at, "objects of this component are named %s in namespace %s, as those of %s are; rename one", obj, a.Project, describe(prev))
				continue
			} else if !dup {
				objects[a.Cluster+"/"+a.Project+"/"+obj] = owner{a, c.Name}
			}
			k := layout.ComponentFluxName(a.Project, a.Spec.Name, c.Name)
			if prev, dup := kustomizations[a.Cluster+"/"+k]; dup && prev.a != a {
				what := describe(prev)
				if prev.component == "" {
					what = "the namespace of project " + prev.a.Project
				}
				ps.Add(a.Doc, at, "the Flux Kustomization of this component is named %s, as that of %s is; rename one", k, what)
			} else if !dup {
				kustomizations[a.Cluster+"/"+k] = owner{a, c.Name}
			}
		}
	}
}

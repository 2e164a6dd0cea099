package verify

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// A source per project (platform.yaml fleet.artifacts, on a cluster Flux
// runs in): an app's Flux objects are in its project's folder of Flux
// files, apps/<cluster>/<project>/_flux/<app>.yaml, which the project's
// Kustomization applies from the project's artifact; the project's file in
// the cluster folder holds that OCIRepository and Kustomization. A fleet
// whose root Kustomization applied them from the cluster folder moves in
// two renders: the first keeps them there, marked so that Flux does not
// prune them, the second moves them.

// keptFromPrune is the first Flux object of a file that carries
// kustomize.toolkit.fluxcd.io/prune: disabled.
type keptFromPrune struct {
	file, object string
	at           pos
}

// checkProjectSources reports what goes wrong between the apps' Flux files
// and their projects' sources: an app's Flux objects in both the cluster
// folder and its project's folder (two Kustomizations would apply them),
// a project's Flux file that nothing applies, a Kustomization of a project
// with its own source that still reads the fleet's GitRepository, and (an
// info) an app file kept from pruning, the first step of the move.
func (r *run) checkProjectSources(kss []*fluxKS, repos []*ociRepo) {
	sources := map[string]*ociRepo{} // project Flux folder → its OCIRepository
	for _, o := range repos {
		if o.annotated && o.project && sources[o.dir] == nil {
			sources[o.dir] = o
		}
	}
	applied := map[string]*fluxKS{} // project Flux folder → the Kustomization reading its artifact
	for _, k := range kss {
		if k.oci != nil && k.oci.annotated && k.oci.project && applied[k.oci.dir] == nil {
			applied[k.oci.dir] = k
		}
	}
	var out []Finding
	for _, p := range r.t.paths {
		dir := layout.FluxDirOf(p)
		if dir == "" || path.Ext(p) != ".yaml" {
			continue
		}
		l := layout.Parse(p)
		cluster, project, app := l.Cluster, l.Project, strings.TrimSuffix(l.Rest, ".yaml")
		if old := layout.AppFile(r.plat, cluster, project, app); r.t.files[old] != nil {
			by := "its project's Kustomization"
			if k := applied[dir]; k != nil {
				by = "Kustomization " + k.name
			}
			out = append(out, Finding{
				Check: CheckProjects, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(old), Line: firstObjectLine(r.t.files[old]),
					Message: fmt.Sprintf("app %s/%s/%s has its Flux objects both here, applied by the cluster's root Kustomization, and in %s, applied by %s: "+
						"two Kustomizations would apply the same objects and fight over them, each pruning them when its file goes; keep one: "+
						"render moves them in two steps, this file first marked %s, then deleted (see docs/fleet.md)",
						cluster, project, app, r.display(p), by, layout.PruneDisabledLine)},
			})
		}
		if applied[dir] != nil {
			continue
		}
		msg := fmt.Sprintf("nothing applies app %s/%s/%s's Flux objects: ", cluster, project, app)
		pf := layout.ProjectFile(r.plat, cluster, project)
		switch o := sources[dir]; {
		case o != nil:
			msg += fmt.Sprintf("OCIRepository %s (%s:%d) is built from %s, but no Kustomization reads it", o.name, r.display(o.file), o.line, r.display(dir))
		case r.t.files[pf] != nil:
			msg += fmt.Sprintf("the project's file %s has no project source (an OCIRepository built from %s, annotation %s, and the Kustomization %s that applies it)",
				r.display(pf), r.display(dir), layout.AnnotationArtifactPath, layout.ProjectFluxName(project))
		default:
			msg += fmt.Sprintf("the fleet has no project file %s to hold the project's source (an OCIRepository built from %s and the Kustomization %s that applies it)",
				r.display(pf), r.display(dir), layout.ProjectFluxName(project))
		}
		out = append(out, Finding{
			Check: CheckProjects, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(p), Line: firstObjectLine(r.t.files[p]),
				Message: msg + "; re-render: with fleet.artifacts, on a cluster Flux runs in, render writes the project's source"},
		})
	}
	if r.plat.Fleet.Artifacts != nil {
		for _, k := range kss {
			if k.sourceKind != "GitRepository" || k.sourceName != r.plat.Fleet.SourceName || k.sourceNamespace != r.plat.Fleet.SourceNamespace {
				continue
			}
			dir := r.projectFluxDir(k)
			o := sources[dir]
			if o == nil {
				continue
			}
			line, col := k.sourceAt.line, k.sourceAt.col
			if line == 0 {
				line = k.line
			}
			out = append(out, Finding{
				Check: CheckProjects, Diagnostic: diag.Diagnostic{Severity: SeverityWarning, File: r.display(k.file), Line: line, Column: col,
					Object: k.object(), Path: "spec.sourceRef",
					Message: fmt.Sprintf("reads the fleet's GitRepository %s/%s, though platform.yaml has fleet.artifacts and project %s has its own source (OCIRepository %s): "+
						"Flux applies it again on every fleet commit, whatever the commit changed; re-render: render points each component's Kustomization at its own artifact",
						k.sourceNamespace, k.sourceName, path.Base(path.Dir(dir)), o.name)},
			})
		}
	}
	for _, k := range r.kept {
		if !r.inClusterApps(k.file) {
			continue
		}
		out = append(out, Finding{
			Check: CheckProjects, Diagnostic: diag.Diagnostic{Severity: SeverityInfo, File: r.display(k.file), Line: k.at.line, Column: k.at.col,
				Object: k.object, Path: "metadata.annotations." + layout.PruneAnnotation,
				Message: "this app's Flux objects are kept from pruning while they move to their project's source (the first of render's two steps); " +
					"render again once Flux applied it to finish the move"},
		})
	}
	r.findings.add(out...)
}

// projectFluxDir returns the Flux folder of the project a Kustomization
// belongs to: the one holding its file, or that of the project whose
// component folder it builds; "" for none.
func (r *run) projectFluxDir(k *fluxKS) string {
	if dir := layout.FluxDirOf(k.file); dir != "" {
		return dir
	}
	rel, ok := r.fleetRel(k.path)
	if !ok {
		return ""
	}
	if l := layout.Parse(rel); l.Preview == 0 && l.App != "" {
		return layout.FluxDir(l.Cluster, l.Project)
	}
	return ""
}

// inClusterApps reports whether a fleet file is in a cluster's folder of
// app files (clusters/<cluster>/apps), which the root Kustomization
// applies.
func (r *run) inClusterApps(p string) bool {
	dir := path.Dir(p)
	if slices.ContainsFunc(r.plat.Clusters, func(c spec.Cluster) bool { return dir == path.Join(c.Path, "apps") }) {
		return true
	}
	parts := strings.Split(dir, "/")
	return len(parts) == 3 && parts[0] == "clusters" && parts[2] == "apps"
}

// firstObjectLine returns the line of a file's first object (its first
// apiVersion or kind at the start of a line), or 1.
func firstObjectLine(data []byte) int {
	line := 1
	for rest := data; len(rest) > 0; line++ {
		if bytes.HasPrefix(rest, []byte("apiVersion:")) || bytes.HasPrefix(rest, []byte("kind:")) {
			return line
		}
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		rest = rest[i+1:]
	}
	return 1
}

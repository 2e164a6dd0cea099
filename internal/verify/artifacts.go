package verify

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/manifest"
)

// ociRepo is a Flux OCIRepository found in a fleet file: what the artifact
// checks and the builds need of it, as positions rather than nodes (a
// fleet of artifacts has one per component).
type ociRepo struct {
	name, namespace string
	cluster         string // the cluster its file is for
	file            string
	line            int
	url             string
	urlAt           pos
	digest          string
	digestAt        pos
	refAt           pos    // spec.ref, or spec, or the document
	pin             string // what pins it when no digest does: "spec.ref.tag 1.0", ...
	insecure        bool
	// annotated: the OCIRepository has the fleetwright.io/artifact-path
	// annotation, whose value dir is the fleet folder the artifact is
	// built from.
	annotated bool
	dir       string
	dirAt     pos
	// project: dir is a project's folder of Flux files
	// (apps/<cluster>/<project>/_flux), whose artifact holds only the
	// *.yaml files directly in it (see artifactFiles).
	project bool
	// dirOK: dir is a folder of the fleet, which builds read in place of
	// the artifact. Set by checkArtifacts.
	dirOK bool
	// built is the digest of the artifact rebuilt from dir's files, when
	// the OCIRepository pins a digest and dir is a folder.
	built string
	// mismatch is the finding's message of a project's artifact whose
	// files do not pack to the pinned digest, while the drift check's
	// render runs: it then names the files that differ.
	mismatch string
}

type pos struct{ line, col int }

func (o *ociRepo) key() string    { return o.namespace + "/" + o.name }
func (o *ociRepo) object() string { return "OCIRepository/" + o.name }

// id names the OCIRepository in the fleet: its key on its cluster.
func (o *ociRepo) id() string { return o.cluster + "\x00" + o.key() }

func isOCIRepository(n *node) bool {
	return strings.HasPrefix(n.Get("apiVersion").Text(), "source.toolkit.fluxcd.io/") && n.Get("kind").Text() == "OCIRepository"
}

// mightHoldOCIRepository reports whether a file may define an OCIRepository.
func mightHoldOCIRepository(data []byte) bool {
	return bytes.Contains(data, []byte("OCIRepository"))
}

// at returns the position of a field of n (its key), or of its nearest
// parent that n has.
func at(n *node, field string) pos {
	for {
		val, key := n.Path(field)
		switch {
		case key != nil:
			return pos{int(key.Line), int(key.Col)}
		case val != nil:
			return pos{int(val.Line), int(val.Col)}
		case field == "":
			return pos{}
		}
		field = parentPath(field)
	}
}

func (r *run) ociRepo(file string, n *node) *ociRepo {
	md, sp := n.Get("metadata"), n.Get("spec")
	ref := sp.Get("ref")
	o := &ociRepo{
		name:      md.Get("name").Text(),
		namespace: md.Get("namespace").Text(),
		cluster:   r.clusterOf(file),
		file:      file,
		line:      int(n.Line),
		url:       sp.Get("url").Text(),
		urlAt:     at(n, "spec.url"),
		digest:    ref.Get("digest").Text(),
		digestAt:  at(n, "spec.ref.digest"),
		refAt:     at(n, "spec.ref"),
		insecure:  sp.Get("insecure").Text() == "true",
	}
	if o.namespace == "" {
		o.namespace = r.plat.Fleet.SourceNamespace
	}
	for _, f := range []string{"semver", "tag"} { // source-controller's precedence after the digest
		if v := ref.Get(f).Text(); v != "" && o.pin == "" {
			o.pin = fmt.Sprintf("spec.ref.%s %s", f, v)
		}
	}
	if a := md.Get("annotations").Get(layout.AnnotationArtifactPath); a != nil {
		o.annotated, o.dir = true, a.Text()
		o.dirAt = at(n, "metadata.annotations."+layout.AnnotationArtifactPath)
		o.project = isFluxDir(o.dir)
	}
	return o
}

// isFluxDir reports whether a fleet folder is a project's folder of Flux
// files, apps/<cluster>/<project>/_flux (layout.FluxDir).
func isFluxDir(dir string) bool { return layout.FluxDirOf(dir+"/x.yaml") == dir }

// pruneDisabledAt returns the position of an object's annotation
// kustomize.toolkit.fluxcd.io/prune: disabled (the zero pos without it).
func pruneDisabledAt(n *node) pos {
	if a := n.Get("metadata").Get("annotations").Get(layout.PruneAnnotation); a != nil && a.Text() == layout.PruneDisabled {
		return at(n, "metadata.annotations."+layout.PruneAnnotation)
	}
	return pos{}
}

func (r *run) ociFinding(o *ociRepo, field string, p pos, format string, args ...any) Finding {
	if p.line == 0 {
		p.line = o.line
	}
	return Finding{
		Check: CheckArtifact, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(o.file), Line: p.line, Column: p.col,
			Object: o.object(), Path: field, Message: fmt.Sprintf(format, args...)},
	}
}

// reRender is the fix of every artifact that does not match its folder.
const reRender = "re-render: render rebuilds the artifact from the folder, pushes it and pins its digest"

// checkArtifacts checks every OCIRepository that names the fleet folder
// its artifact is built from (fleetwright.io/artifact-path): the folder is
// there, the OCIRepository is pinned by digest, that digest is the one the
// folder's files pack to (artifact.Build over the files artifactFiles
// returns), and its url is the platform's artifact repository. A project's
// mismatch is kept in mismatch, to be completed by the drift check's
// render (see projectMismatches).
func (r *run) checkArtifacts(ctx context.Context, repos []*ociRepo) {
	var want string
	if a := r.plat.Fleet.Artifacts; a != nil && a.Repository != "" {
		want = "oci://" + a.Repository
	}
	parallel(ctx, len(repos), r.workers, func(i int) {
		o := repos[i]
		if !o.annotated {
			return
		}
		if want != "" && o.url != want && o.url != "" {
			r.findings.add(r.ociFinding(o, "spec.url", o.urlAt,
				"url %s is not the fleet's artifact repository %s (platform.yaml fleet.artifacts.repository); %s", o.url, want, reRender))
		}
		annotation := "metadata.annotations." + layout.AnnotationArtifactPath
		if o.dir == "" || o.dir != path.Clean(o.dir) || o.dir == "." || path.IsAbs(o.dir) || o.dir == ".." || strings.HasPrefix(o.dir, "../") {
			r.findings.add(r.ociFinding(o, annotation, o.dirAt,
				"%q is not a folder path inside the fleet, such as apps/<cluster>/<project>/<app>/<component> or apps/<cluster>/<project>/_flux", o.dir))
			return
		}
		if !r.t.dirs[o.dir] {
			r.findings.add(r.ociFinding(o, annotation, o.dirAt,
				"the artifact is built from folder %s, which the fleet does not have: no Git file shows what Flux would apply; %s, or delete this OCIRepository and its Kustomization",
				r.display(o.dir), reRender))
			return
		}
		o.dirOK = true
		if o.digest == "" {
			why := "it has no spec.ref"
			if o.pin != "" {
				why = "it follows " + o.pin
			}
			r.findings.add(r.ociFinding(o, "spec.ref", o.refAt,
				"not pinned by digest (%s): the fleet would not say which artifact runs, and a push would change it without a fleet commit; pin spec.ref.digest to the artifact of %s (%s)",
				why, r.display(o.dir), reRender))
			return
		}
		a, err := artifact.Build(o.dir, r.artifactFiles(o))
		if err != nil {
			r.findings.add(r.ociFinding(o, annotation, o.dirAt, "rebuilding the artifact: %v", err))
			return
		}
		o.built = a.Digest.String()
		if o.built == o.digest {
			return
		}
		msg := fmt.Sprintf("pins %s, but %s pack to %s: Flux applies content that the fleet's files do not show", o.digest, r.filesOf(o), o.built)
		if extra := r.notGenerated(o); len(extra) > 0 {
			msg += fmt.Sprintf("; without %s, which render did not write, they pack to the pinned digest: render leaves such files out of the artifact, move them out of the folder", strings.Join(extra, ", "))
		} else if o.project && r.opts.Apps != nil {
			o.mismatch = msg // completed with the files the specs render otherwise
			return
		} else {
			msg += "; " + reRender
		}
		r.findings.add(r.ociFinding(o, "spec.ref.digest", o.digestAt, "%s", msg))
	})
	r.mu.Lock()
	for _, o := range repos {
		if o.built != "" {
			r.stats.Artifacts++
		}
	}
	r.mu.Unlock()
}

// folderFiles returns every file of a fleet folder, by its path inside it.
func (r *run) folderFiles(dir string) []artifact.File {
	paths := r.t.under(dir)
	files := make([]artifact.File, len(paths))
	for i, p := range paths {
		files[i] = artifact.File{Name: p[len(dir)+1:], Data: r.t.files[p]}
	}
	return files
}

// artifactFiles returns the files an OCIRepository's artifact is built
// from, by their path inside its folder, as render packs them: every file
// of a component's folder; for a project's folder of Flux files
// (layout.FluxDir), exactly the *.yaml files directly in it, the apps'
// Flux files.
func (r *run) artifactFiles(o *ociRepo) []artifact.File {
	if !o.project {
		return r.folderFiles(o.dir)
	}
	var files []artifact.File
	for _, p := range r.t.under(o.dir) {
		if name := p[len(o.dir)+1:]; !strings.Contains(name, "/") && path.Ext(name) == ".yaml" {
			files = append(files, artifact.File{Name: name, Data: r.t.files[p]})
		}
	}
	return files
}

// projectMismatches reports the projects' artifacts whose files do not
// pack to the digest pinned (see checkArtifacts), naming the files that
// differ from what the specs render (desired, the drift check's render).
func (r *run) projectMismatches(repos []*ociRepo, desired map[string][]byte) {
	for _, o := range repos {
		if o.mismatch == "" {
			continue
		}
		var changed, notRendered, missing []string
		inGit := map[string]bool{}
		for _, f := range r.artifactFiles(o) {
			p := path.Join(o.dir, f.Name)
			inGit[p] = true
			switch want, ok := desired[p]; {
			case !ok:
				notRendered = append(notRendered, f.Name)
			case !bytes.Equal(want, f.Data):
				changed = append(changed, f.Name)
			}
		}
		for p := range desired {
			if path.Dir(p) == o.dir && path.Ext(p) == ".yaml" && !inGit[p] {
				missing = append(missing, path.Base(p))
			}
		}
		slices.Sort(missing)
		var parts []string
		for _, p := range []struct {
			what  string
			names []string
		}{{"changed", changed}, {"not rendered", notRendered}, {"missing", missing}} {
			if len(p.names) > 0 {
				parts = append(parts, p.what+": "+strings.Join(p.names, ", "))
			}
		}
		msg := o.mismatch
		if len(parts) == 0 {
			msg += "; the specs render these files as they are: the pinned digest is what differs"
		} else {
			msg += fmt.Sprintf("; the specs render these files otherwise (%s)", strings.Join(parts, "; "))
		}
		r.findings.add(r.ociFinding(o, "spec.ref.digest", o.digestAt, "%s; %s", msg, reRender))
	}
}

// filesOf names the files an OCIRepository's artifact is built from.
func (r *run) filesOf(o *ociRepo) string {
	if o.project {
		return "the *.yaml files of " + r.display(o.dir)
	}
	return "the files of " + r.display(o.dir)
}

// notGenerated returns the files of an artifact's folder without render's
// header when the folder's other files pack to the pinned digest: files
// added by hand, which render leaves out of the artifact it pushes.
func (r *run) notGenerated(o *ociRepo) []string {
	var keep []artifact.File
	var extra []string
	for _, f := range r.artifactFiles(o) {
		if bytes.HasPrefix(f.Data, []byte(manifest.Header)) {
			keep = append(keep, f)
		} else {
			extra = append(extra, f.Name)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	if a, err := artifact.Build(o.dir, keep); err != nil || a.Digest.String() != o.digest {
		return nil
	}
	return extra
}

// resolveSources links each Kustomization that reads an OCIRepository to
// it, and reports one that reads an OCIRepository no fleet file defines,
// or that builds a path other than the artifact's root.
func (r *run) resolveSources(kss []*fluxKS, repos []*ociRepo) {
	byKey := make(map[string]*ociRepo, len(repos))
	for _, o := range repos {
		byKey[o.id()] = o
	}
	for _, k := range kss {
		if k.sourceKind != "OCIRepository" {
			continue
		}
		o := byKey[k.cluster+"\x00"+k.sourceNamespace+"/"+k.sourceName]
		if o == nil {
			if k.sourceName != "" { // a missing name is an API finding
				r.findings.add(Finding{
					Check: CheckArtifact, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(k.file), Line: k.sourceAt.line, Column: k.sourceAt.col,
						Object: k.object(), Path: "spec.sourceRef.name",
						Message: fmt.Sprintf("reads OCIRepository %s/%s, which no fleet file defines: Flux would not apply it", k.sourceNamespace, k.sourceName)},
				})
			}
			k.unresolved = true
			continue
		}
		k.oci = o
		if !o.annotated {
			continue
		}
		if clean := path.Clean("/" + k.path); clean != "/" {
			line, col := k.pathLine, k.pathCol
			if line == 0 {
				line = k.line
			}
			whose := "a component's"
			if o.project {
				whose = "a project's"
			}
			r.findings.add(Finding{
				Check: CheckArtifact, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(k.file), Line: line, Column: col,
					Object: k.object(), Path: "spec.path",
					Message: fmt.Sprintf("path %s: the artifact of OCIRepository %s holds folder %s at its root, and %s Kustomization builds that root: the path must be ./ (so Flux would build %s)",
						k.path, o.name, r.display(o.dir), whose, r.display(path.Join(o.dir, clean)))},
			})
		}
	}
}

// ociDir returns the fleet folder a Kustomization reading an artifact
// builds: the artifact's folder joined with its path, as Flux joins the
// path to the artifact's root.
func (k *fluxKS) ociDir() string {
	return path.Join(k.oci.dir, strings.TrimPrefix(path.Clean("/"+k.path), "/"))
}

// sortRepos orders OCIRepositories by key, file and line and drops the
// second definition of one (reported as a duplicate object).
func sortRepos(all []*ociRepo) []*ociRepo {
	slices.SortStableFunc(all, func(a, b *ociRepo) int {
		if c := strings.Compare(a.id(), b.id()); c != 0 {
			return c
		}
		if c := strings.Compare(a.file, b.file); c != 0 {
			return c
		}
		return a.line - b.line
	})
	return slices.CompactFunc(all, func(a, b *ociRepo) bool { return a.id() == b.id() })
}

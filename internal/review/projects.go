package review

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// A source per project. With fleet.artifacts, on a cluster Flux runs in,
// an app's Flux objects live in its project's Flux folder
// (apps/<cluster>/<project>/_flux/<app>.yaml), packed as the project's
// artifact; the project's file in the cluster folder pins that artifact's
// digest in an OCIRepository, read by the project's Kustomization. A
// component's change then moves two digests: the component's, in its
// app's Flux file, and the project's, which follows its Flux folder as
// the component's follows its folder.
//
// A fleet whose root Kustomization applies the apps' Flux objects from the
// cluster folder moves them in two steps, and the review says which: the
// first marks them kustomize.toolkit.fluxcd.io/prune: disabled where they
// are, the second moves them, and the root, which no longer applies them,
// leaves them to the project's Kustomization. A move without the first
// step makes the root prune them, and they everything they applied. Going
// back is one step: the root takes the objects over before it prunes the
// project's Kustomization.

var pruneField = []string{"metadata", "annotations", layout.PruneAnnotation}

// keptFromPrune says whether Flux keeps an object that the Kustomization
// which applied it no longer applies.
func keptFromPrune(o object) bool {
	return str(get(o.Obj, "metadata", "annotations", layout.PruneAnnotation)) == layout.PruneDisabled
}

// rootApplied says whether the root Kustomization applies a fleet file: a
// file outside apps/, in a cluster folder.
func rootApplied(p string) bool { return !strings.HasPrefix(p, layout.AppsDir+"/") }

// allKept says whether every object of a Flux file is kept from pruning.
func allKept(f *fluxFile) bool {
	n := 0
	for _, d := range f.docs {
		if d.ok {
			if !keptFromPrune(d.obj) {
				return false
			}
			n++
		}
	}
	return n > 0
}

// placements are the apps whose Flux objects change place, by step.
type placements struct {
	preparing map[string]bool // marked to be kept where the root applies them (first step)
	moving    map[string]bool // moved, kept, to their project's Flux folder (second step)
	back      map[string]bool // moved back from their project's Flux folder
	unmarked  map[string]bool // no longer marked, staying where the root applies them
	// unsafe are the components moved to a project's Flux folder without
	// the first step, by app.
	unsafe map[string][]*component
	// into and outOf are the projects' Flux folders that Flux objects move
	// into from the cluster folder, and out of to it; bound the projects'
	// folders (apps/<cluster>/<project>) of the apps preparing.
	into, outOf, bound map[string]bool
}

// place finds the Flux objects that change place, explains the fields
// that change with the place, and pairs the files they move between.
func (fx *fluxView) place(byID map[string]*component, headFiles map[string]*fluxFile, changes []fleet.Change, removedApps map[string]bool,
	explain map[string][][]string, addedOK, removedOK map[string]bool) {
	st := placements{preparing: map[string]bool{}, moving: map[string]bool{}, back: map[string]bool{}, unmarked: map[string]bool{},
		unsafe: map[string][]*component{}, into: map[string]bool{}, outOf: map[string]bool{}, bound: map[string]bool{}}
	explainPrune := func(s *fluxSide) {
		explain[s.ks.Key()] = append(explain[s.ks.Key()], pruneField)
		if s.oci != nil {
			explain[s.oci.Key()] = append(explain[s.oci.Key()], pruneField)
		}
	}
	pairs := map[string]string{} // base file → head file its Kustomizations move to, "" for several
	for _, c := range byID {
		b, h := c.base, c.head
		if c.project || b == nil || b == h {
			continue
		}
		app := c.app()
		if app == "" { // a component whose folder neither side names
			app = c.key
		}
		if h == nil {
			if keptFromPrune(*b.ks) {
				fx.keptDirs[c.dir] = true
				if removedApps[app] {
					fx.keptApps[app] = true
				} else {
					fx.danger = append(fx.danger, fmt.Sprintf("%s is removed, but its Kustomization %s is marked `%s`: Flux does not prune it, so it and the objects it applied stay on the cluster; delete them by hand",
						c.what(), name(*b.ks), layout.PruneDisabledLine))
				}
			}
			continue
		}
		if b.ks.File != h.ks.File {
			if to, ok := pairs[b.ks.File]; ok && to != h.ks.File {
				pairs[b.ks.File] = ""
			} else {
				pairs[b.ks.File] = h.ks.File
			}
		}
		bRoot, hRoot := rootApplied(b.ks.File), rootApplied(h.ks.File)
		bKept, hKept := keptFromPrune(*b.ks), keptFromPrune(*h.ks)
		bFlux, hFlux := b.ks.FluxDir(), h.ks.FluxDir()
		switch {
		case bRoot && hRoot && !bKept && hKept && allKept(headFiles[h.ks.File]):
			st.preparing[app] = true
			st.bound[path.Dir(path.Dir(c.dir))] = true
			explainPrune(h)
		case bRoot && !hRoot && hFlux != "":
			st.into[hFlux] = true
			if bKept {
				st.moving[app] = true
				explainPrune(h)
			} else {
				c.unsafeMove = true
				st.unsafe[app] = append(st.unsafe[app], c)
			}
		case !bRoot && hRoot && bFlux != "":
			st.outOf[bFlux] = true
			st.back[app] = true
			if bKept && !hKept {
				explainPrune(h)
			}
		case bRoot && hRoot && bKept && !hKept:
			st.unmarked[app] = true
			explainPrune(h)
		}
	}
	op := map[string]fleet.Op{}
	for _, ch := range changes {
		op[ch.Path] = ch.Op
	}
	for from, to := range pairs {
		if to != "" && op[from] == fleet.Delete && op[to] == fleet.Add {
			fx.movedFrom[to] = from
		}
	}
	projectSourcesMoved(byID, st, addedOK, removedOK)
	if apps := slices.Sorted(maps.Keys(st.unsafe)); len(apps) > maxUnsafeLines {
		fx.danger = append(fx.danger, unsafeMoves(apps))
	} else {
		for _, app := range apps {
			fx.danger = append(fx.danger, unsafeMove(app, st.unsafe[app], byID))
		}
	}
	fx.steps = st
}

// projectSourcesMoved marks the project sources that a migration adds or
// removes as expected: a project's source appears with the first objects
// moved into its folder, and goes with the last moved out.
func projectSourcesMoved(byID map[string]*component, st placements, addedOK, removedOK map[string]bool) {
	for _, c := range byID {
		switch {
		case !c.project:
		case c.base == nil && c.head != nil && st.into[c.dir]:
			addedOK[c.head.ks.Key()] = true
			if c.head.oci != nil {
				addedOK[c.head.oci.Key()] = true
			}
		case c.head == nil && c.base != nil && st.outOf[c.dir]:
			removedOK[c.base.ks.Key()] = true
			if c.base.oci != nil {
				removedOK[c.base.oci.Key()] = true
			}
		}
	}
}

// maxUnsafeLines is the most apps moved without the first step that get
// a danger line each; more get one line together.
const maxUnsafeLines = 3

// unsafeMoves is the danger of many apps whose Flux objects move to their
// projects' Flux folders without the first step.
func unsafeMoves(apps []string) string {
	names := codes(apps[:maxUnsafeLines])
	return fmt.Sprintf("%d apps (%s and %d more) move to their projects' sources in one step: their Kustomizations leave the cluster folder, which the root Kustomization applies, without `%s`, "+
		"so the root prunes them, and they every object they applied, before the projects' Kustomizations create them again. "+
		"Render with the fleet as it is first (that marks them), let Flux apply it, then render again to move them",
		len(apps), names, len(apps)-maxUnsafeLines, layout.PruneDisabledLine)
}

// unsafeMove is the danger of an app whose Flux objects move to their
// project's Flux folder without the first step.
func unsafeMove(app string, comps []*component, byID map[string]*component) string {
	slices.SortFunc(comps, func(a, b *component) int { return strings.Compare(a.key, b.key) })
	var names []string
	for _, c := range comps {
		names = append(names, name(*c.base.ks))
	}
	dir := comps[0].head.ks.FluxDir()
	by := "the project's Kustomization"
	for _, p := range byID {
		if p.project && p.head != nil && p.dir == dir {
			by += " " + name(*p.head.ks)
		}
	}
	return fmt.Sprintf("app %s moves to its project's source in one step: its %s (%s) leave %s, which the root Kustomization applies, without `%s`, "+
		"so the root prunes them, and they every object they applied, before %s creates them again from %s. "+
		"Render with the fleet as it is first (that marks them), let Flux apply it, then render again to move them",
		code(app), plural(len(comps), "Kustomization"), strings.Join(names, ", "), code(comps[0].base.ks.File), layout.PruneDisabledLine, by, code(dir))
}

// unapplied lists the projects' Flux folders that change while no
// project's Kustomization applies them.
func unapplied(changes []fleet.Change, byID map[string]*component) []string {
	applied := map[string]bool{}
	for _, c := range byID {
		if c.project && c.head != nil && c.dir != "" {
			applied[c.dir] = true
		}
	}
	files := map[string][]string{}
	for _, ch := range changes {
		if dir := layout.FluxDirAbove(ch.Path); dir != "" && ch.Op != fleet.Delete && !applied[dir] {
			files[dir] = append(files[dir], code(strings.TrimPrefix(ch.Path, dir+"/")))
		}
	}
	var out []string
	for _, dir := range slices.Sorted(maps.Keys(files)) {
		out = append(out, fmt.Sprintf("no project Kustomization applies %s, so Flux does not apply the Flux objects of %s: the project's file in the cluster folder must hold the OCIRepository of its artifact and the Kustomization that reads it",
			code(dir), strings.Join(files[dir], ", ")))
	}
	return out
}

// apps is "1 app's" or "N apps'".
func appsOf(n int) string {
	if n == 1 {
		return "1 app's"
	}
	return fmt.Sprintf("%d apps'", n)
}

func itsOrTheir(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}

// folders names the projects' Flux folders, or counts them.
func folders(dirs map[string]bool) string {
	if len(dirs) == 1 {
		for d := range dirs {
			return code(d)
		}
	}
	return fmt.Sprintf("the Flux folders of %d projects", len(dirs))
}

// sources is "its project's source", "their project's source" or "their
// projects' sources".
func sources(apps int, dirs map[string]bool) string {
	switch {
	case apps == 1:
		return "its project's source"
	case len(dirs) == 1:
		return "their project's source"
	}
	return "their projects' sources"
}

// writeSteps writes the moves between the cluster folder and the
// projects' Flux folders.
func (st placements) writeSteps(b *strings.Builder) {
	if n := len(st.preparing); n > 0 {
		fmt.Fprintf(b, "**Migration, first step:** prepares %s move to %s: %s Flux objects in the cluster folder are marked `%s`, "+
			"so Flux keeps them if they are no longer applied from here. Once Flux has applied this, the next render moves them.\n\n",
			appsOf(n), sources(n, st.bound), itsOrTheir(n), layout.PruneDisabledLine)
	}
	if n := len(st.moving); n > 0 {
		fmt.Fprintf(b, "**Migration, second step:** %s Flux objects move from the cluster folder to %s (%s, applied from the artifact of each project): "+
			"the root Kustomization leaves them in place, as they are kept from pruning, and the project's Kustomization takes them over; their objects stay. "+
			"This is safe once Flux has applied the first step, which marked them: the root Kustomization's last applied revision must be that commit or a later one.\n\n",
			appsOf(n), sources(n, st.into), folders(st.into))
	}
	if n := len(st.back); n > 0 {
		fmt.Fprintf(b, "**Migration:** %s Flux objects move back from %s (%s) to the cluster folder: the root Kustomization takes them over "+
			"before it prunes the project's Kustomization, whose finalizer then deletes only what is still its own; their objects stay.\n\n",
			appsOf(n), sources(n, st.outOf), folders(st.outOf))
	}
	if n := len(st.unmarked); n > 0 {
		fmt.Fprintf(b, "**Migration:** %s Flux objects in the cluster folder are no longer kept from pruning (`%s` goes): the root Kustomization applies them as before.\n\n",
			appsOf(n), layout.PruneDisabledLine)
	}
}

// projectRow says what Flux does with a project's Kustomization, "" when
// nothing to say.
func (fx *fluxView) projectRow(c *component) string {
	st := fx.steps
	switch {
	case c.head == nil:
		if st.outOf[c.dir] {
			return "removed, with its OCIRepository: the root Kustomization now applies its apps' Flux objects"
		}
		return "removed, with its OCIRepository: it prunes the Flux objects of its apps"
	case c.head.oci == nil || c.mismatch:
		return ""
	case c.base == nil:
		why := fmt.Sprintf("new: pulls its artifact %s and applies its apps' Flux objects", cellCode(short(c.head.digest())))
		if st.into[c.dir] {
			why += ", moved here from the cluster folder"
		}
		return why
	case c.digestChanged:
		why := fmt.Sprintf("pulls its new artifact %s and applies its apps' Flux objects", cellCode(short(c.head.digest())))
		if l := fx.dirChanges[c.dir]; len(l) > 0 {
			if len(l) > 4 {
				l = append(l[:3:3], fmt.Sprintf("%d more change", len(l)-3))
			}
			why += " (" + strings.Join(l, ", ") + ")"
		}
		if c.ksChanged {
			why += "; its Kustomization changes too"
		}
		return why
	case c.ksChanged:
		return "its Kustomization changes: reconciled with the same artifact"
	}
	return ""
}

// folderChange names a file of a project's Flux folder and how it changes.
func folderChange(ch fleet.Change, dir string) string {
	verb := map[fleet.Op]string{fleet.Add: "is added", fleet.Update: "changes", fleet.Delete: "is removed, its Flux objects pruned"}[ch.Op]
	return cellCode(path.Clean(strings.TrimPrefix(ch.Path, dir+"/"))) + " " + verb
}

// projectsPart says how many project Kustomizations Flux reconciles, for
// the summary's sentence; "" when the fleet has none.
func (n counts) projectsPart() string {
	switch {
	case n.projects == 0:
		return ""
	case n.projects == 1 && n.projectsReconciled == 1:
		return " (and its one project Kustomization)"
	case n.projects == 1:
		return " (but not its one project Kustomization)"
	case n.projectsReconciled == n.projects:
		return fmt.Sprintf(" (and all %d project Kustomizations)", n.projects)
	case n.projectsReconciled == 0:
		return fmt.Sprintf(" (and none of the %d project Kustomizations)", n.projects)
	}
	return fmt.Sprintf(" (and %d of the %d project Kustomizations)", n.projectsReconciled, n.projects)
}

// writeEmptied says what happens to the projects whose last app goes:
// render keeps the project's file (its Namespace marked
// layout.EmptiedAnnotation, its account and binding) for one render, so
// that Flux deletes the apps' Kustomizations, as that account, before
// the account; the next render removes the file and the namespace.
func writeEmptied(b *strings.Builder, changes []fleet.Change) {
	marked := layout.IsEmptied
	for _, ch := range changes {
		project := strings.TrimSuffix(path.Base(ch.Path), ".yaml")
		switch {
		case ch.Op != fleet.Delete && marked(ch.New) && !marked(ch.Old):
			fmt.Fprintf(b, "**Project %s has no app left** (%s): its namespace stays, with the service account its apps' Flux objects are deleted as, "+
				"so that Flux prunes every object of its apps first; the next render removes its namespace.\n\n", code(project), code(ch.Path))
		case ch.Op == fleet.Delete && marked(ch.Old):
			fmt.Fprintf(b, "**Project %s is removed** (%s): Flux deletes its namespace, emptied by the previous render.\n\n", code(project), code(ch.Path))
		}
	}
}

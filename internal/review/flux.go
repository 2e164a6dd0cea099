package review

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// What Flux does with a fleet commit depends on where each component's
// Kustomization reads its files from. In the fleet's one GitRepository
// (the layout without fleet.artifacts), every commit moves the source of
// every component, so Flux reconciles them all. With fleet.artifacts, each
// Kustomization reads an OCIRepository of its own, pinned to the digest of
// its folder's artifact in the app's file: a component is reconciled when
// that digest or its Kustomization's spec changes, and a digest that
// changes with its folder is a consequence of the folder's change, not a
// change to show on its own.

// artifactPathAnnotation names the folder an OCIRepository's artifact is
// built from (layout.AnnotationArtifactPath).
const artifactPathAnnotation = layout.AnnotationArtifactPath

// fluxDoc is one document of a file holding Flux objects.
type fluxDoc struct {
	text string // without the file's leading comment
	obj  object
	ok   bool // text is a Kubernetes object
}

// fluxFile is a file holding Flux objects: an app's file in the cluster
// folder (its Kustomizations and OCIRepositories), a project's file.
type fluxFile struct {
	header string // the comment lines the file starts with
	docs   []fluxDoc
	nl     bool // the file ends with a newline
}

// isFluxFile says whether a fleet file may hold Flux Kustomizations: a
// file outside the component folders (the cluster folder, a project's
// _project or _flux folder) that names kustomize-controller's API group.
func isFluxFile(p string, b []byte) bool {
	return !layout.InComponentDir(p) && bytes.Contains(b, []byte("kustomize.toolkit.fluxcd.io/"))
}

// parseFluxFile reads a changed Flux file whole: its header, and each
// document's text and object.
func parseFluxFile(p string, b []byte) *fluxFile {
	f, body := fluxFileOf(b)
	for text := range strings.SplitSeq(body, fleet.DocumentSeparator) {
		d := fluxDoc{text: text}
		d.obj, d.ok = parseObject(p, text)
		f.docs = append(f.docs, d)
	}
	return f
}

// fluxFileOf cuts a Flux file's leading comment lines off: the file,
// with room for its documents, and the text that holds them.
func fluxFileOf(b []byte) (*fluxFile, string) {
	s := string(b)
	f := &fluxFile{nl: strings.HasSuffix(s, "\n")}
	for strings.HasPrefix(s, "#") {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			i = len(s) - 1
		}
		f.header += s[:i+1]
		s = s[i+1:]
	}
	s = strings.TrimSuffix(s, "\n")
	f.docs = make([]fluxDoc, 0, strings.Count(s, fleet.DocumentSeparator)+1)
	return f, s
}

// parseObject reads one document of a Flux file as an object: ok is false
// when it is none (no kind).
func parseObject(p, text string) (object, bool) {
	o, ok := fleet.ReadObject(p, []byte(text))
	return object{Object: o}, ok && o.Kind != ""
}

// text writes the file again from its documents.
func (f *fluxFile) text(docs []string) string {
	s := f.header + strings.Join(docs, "\n---\n")
	if f.nl && len(docs) > 0 {
		s += "\n"
	}
	return s
}

// fluxSide is a component's Flux objects on one side of the change.
type fluxSide struct {
	ks   *object // in its file's documents
	kind string  // of the source it reads
	oci  *object // nil: the Kustomization reads another kind of source
}

func (s *fluxSide) sourceKind() string { return s.kind }

func (s *fluxSide) readsOCI() bool { return s.sourceKind() == "OCIRepository" }

func (s *fluxSide) digest() string {
	if s.oci == nil {
		return ""
	}
	return str(get(s.oci.Obj, "spec", "ref", "digest"))
}

// component is one component's Flux Kustomization on both sides, or a
// project's (project): the Kustomization that applies the Flux files of
// the project's apps from the project's artifact.
type component struct {
	key        string // cluster/project/app/component (cluster/project), else the Kustomization's namespace/name
	dir        string // its folder in the fleet, "" when neither side says
	base, head *fluxSide
	project    bool

	folderChanged bool // a file of dir changes
	ksChanged     bool // the Kustomization's spec changes other than its source
	migrated      bool // the Kustomization moves between the GitRepository and an OCIRepository
	digestChanged bool // both sides read an OCIRepository, pinned to different digests
	mismatch      bool // the pinned digest is not the folder's (a danger)
	// pinsChanged: only the artifacts its dependsOn's readyExprs name for
	// its dependencies change (they follow the dependencies' folders): Flux
	// checks it again once the dependencies have applied the new ones.
	pinsChanged bool
	// unsafeMove: the Kustomization leaves the files the root Kustomization
	// applies for a project's Flux folder without being kept from pruning:
	// the root prunes it, and it its objects, before the project's
	// Kustomization creates it again.
	unsafeMove bool
}

// what names the component in a sentence.
func (c *component) what() string {
	if c.project {
		return "project " + code(c.key)
	}
	return "component " + code(c.key)
}

func (c *component) app() string { return layout.AppOf(c.dir + "/x") }

// reconciled says whether Flux reconciles the component for this change.
func (c *component) reconciled() bool {
	switch {
	case c.head == nil:
		return false
	case c.head.sourceKind() == "GitRepository":
		return true // every fleet commit moves the GitRepository
	}
	return c.base == nil || c.ksChanged || c.migrated || c.digestChanged || c.pinsChanged || c.unsafeMove
}

// changes says whether the change touches the component: what Flux
// reconciles when each component has its own source.
func (c *component) changes() bool {
	return c.head != nil && (c.base == nil || c.folderChanged || c.ksChanged || c.digestChanged)
}

// fluxView is what the change does to the fleet's Flux sources.
type fluxView struct {
	comps  []*component // sorted by key
	danger []string
	// quiet are the ids of objects whose change is only a consequence of
	// another (a digest that follows its folder, a source switch): left
	// out of the counts per kind.
	quiet map[string]bool
	// shown holds, for each changed Flux file, its base with those
	// consequences applied: its diff against the head is what is left to
	// show.
	shown map[string][]byte
	// removedOCI counts, per removed app, the OCIRepositories that go
	// with its Kustomizations.
	removedOCI map[string]int
	sourceName string // the GitRepository the old layout reads
	n          *counts
	// steady counts the components whose Flux objects and folder the
	// change leaves alone.
	steady counts
	// parsed are the changed Flux files of each side (base, head), read
	// whole.
	parsed [2]map[string]*fluxFile
	// movedFrom names, for a Flux file the change adds, the file it
	// deletes whose Flux objects moved there (to or from a project's Flux
	// folder).
	movedFrom map[string]string
	// steps are the apps whose Flux objects change place, by step.
	steps placements
	// keptApps are the removed apps whose Kustomizations Flux does not
	// prune (prune: disabled): their objects stay.
	keptApps map[string]bool
	// keptDirs are the folders of the removed components whose
	// Kustomizations Flux does not prune.
	keptDirs map[string]bool
	// dirChanges names the changed files of each project's Flux folder.
	dirChanges map[string][]string
}

// sources are the ids of the Flux objects that the view explains: the
// OCIRepositories that the components and projects read (their digests
// checked against their folders) and those that come or go with a move
// between layouts.
func (fx *fluxView) sources() map[string]bool {
	out := maps.Clone(fx.quiet)
	for _, c := range fx.comps {
		if c.head != nil && c.head.oci != nil {
			out[c.head.oci.Key()] = true
		}
	}
	return out
}

// read says which files of a side the view has read whole.
func (fx *fluxView) read(side int) func(string) bool {
	return func(p string) bool { return fx.parsed[side][p] != nil }
}

// addObjects adds the objects of the files the view has read whole to a
// side's objects, so that they are parsed once.
func (fx *fluxView) addObjects(objs map[string]object, side int) {
	for _, f := range fx.parsed[side] {
		for _, d := range f.docs {
			if d.ok {
				objs[d.obj.Key()] = d.obj
			}
		}
	}
}

// fluxSources reads the Flux objects of both fleets: the head's whole (a
// component whose file does not change is still reconciled when it reads
// the GitRepository), the base's files that change.
func fluxSources(changes []fleet.Change, base, head map[string][]byte, removedApps map[string]bool) *fluxView {
	fx := &fluxView{quiet: map[string]bool{}, shown: map[string][]byte{}, removedOCI: map[string]int{}, parsed: [2]map[string]*fluxFile{{}, {}},
		movedFrom: map[string]string{}, keptApps: map[string]bool{}, keptDirs: map[string]bool{}, dirChanges: map[string][]string{}}
	sc := &fluxScan{fx: fx, changedFile: map[string]bool{}, changedDir: map[string]bool{}, byID: map[string]*component{}}
	sc.changed(changes)
	sc.read(base, head)
	if len(sc.headFiles) == 0 && len(sc.baseFiles) == 0 {
		return fx
	}
	sc.collect(sc.headFiles, 1)
	sc.collect(sc.baseFiles, 0)
	fx.checkDigests(sc.place(), head)
	ex := sc.explain(removedApps)
	fx.place(sc.byID, sc.headFiles, changes, removedApps, ex.fields, ex.addedOK, ex.removedOK)
	for id := range ex.addedOK {
		fx.quiet[id] = true
	}
	for id := range ex.removedOK {
		fx.quiet[id] = true
	}
	sc.show(changes, ex)
	fx.danger = append(fx.danger, unapplied(changes, sc.byID)...)
	fx.comps = slices.SortedFunc(maps.Values(sc.byID), func(a, b *component) int { return strings.Compare(a.key, b.key) })
	slices.Sort(fx.danger)
	return fx
}

// fluxScan is fluxSources at work: what changes, the Flux files of each
// side, and the components read from them, by the id of their
// Kustomization.
type fluxScan struct {
	fx                   *fluxView
	changedFile          map[string]bool
	changedDir           map[string]bool // component and project Flux folders with a changed file
	baseFiles, headFiles map[string]*fluxFile
	byID                 map[string]*component
}

// changed notes the files and folders that change.
func (sc *fluxScan) changed(changes []fleet.Change) {
	for _, ch := range changes {
		sc.changedFile[ch.Path] = true
		if d := layout.ComponentDirOf(ch.Path); d != "" {
			sc.changedDir[d] = true
		} else if d := layout.FluxDirAbove(ch.Path); d != "" {
			sc.changedDir[d] = true
			sc.fx.dirChanges[d] = append(sc.fx.dirChanges[d], folderChange(ch, d))
		}
	}
}

// read reads the Flux files of both sides: the changed ones whole, the
// head's others by a scan; an unchanged file is the same on both sides.
func (sc *fluxScan) read(base, head map[string][]byte) {
	fx := sc.fx
	sc.headFiles = map[string]*fluxFile{}
	for p, b := range head {
		switch {
		case !isFluxFile(p, b):
		case sc.changedFile[p]:
			sc.headFiles[p] = parseFluxFile(p, b)
			fx.parsed[1][p] = sc.headFiles[p]
		default:
			sc.headFiles[p] = scanFluxFile(p, b)
		}
	}
	sc.baseFiles = map[string]*fluxFile{}
	for p, b := range base {
		switch {
		case !sc.changedFile[p]:
			if f := sc.headFiles[p]; f != nil {
				sc.baseFiles[p] = f
			}
		case isFluxFile(p, b) || sc.headFiles[p] != nil:
			// A changed file that holds Flux objects on one side (a
			// project's file that gains its source) is read on both.
			sc.baseFiles[p] = parseFluxFile(p, b)
			fx.parsed[0][p] = sc.baseFiles[p]
			if hb, ok := head[p]; ok && sc.headFiles[p] == nil {
				sc.headFiles[p] = parseFluxFile(p, hb)
				fx.parsed[1][p] = sc.headFiles[p]
			}
		}
	}
}

// ociIndex finds a side's OCIRepositories: beside the Kustomization that
// reads one, else anywhere in the side's files (indexed on first need).
type ociIndex struct {
	files map[string]*fluxFile
	all   map[string]*object
}

func (x *ociIndex) find(f *fluxFile, id string) (*object, bool) {
	for i, d := range f.docs {
		if d.ok && d.obj.Kind == "OCIRepository" && d.obj.Key() == id {
			return &f.docs[i].obj, true
		}
	}
	if x.all == nil {
		x.all = map[string]*object{}
		for _, f := range x.files {
			for i, d := range f.docs {
				if d.ok && d.obj.Kind == "OCIRepository" {
					x.all[d.obj.Key()] = &f.docs[i].obj
				}
			}
		}
	}
	o, ok := x.all[id]
	return o, ok
}

// collect reads the components of a side's files. A file that does not
// change is read once, for both sides, and its components are only
// counted unless their folder changes.
func (sc *fluxScan) collect(files map[string]*fluxFile, side int) {
	oci := &ociIndex{files: files}
	for p, f := range files {
		steady := !sc.changedFile[p]
		if side == 0 && steady {
			continue
		}
		for i := range f.docs {
			s, project, ok := sc.fluxSide(&f.docs[i], f, oci)
			if !ok {
				continue
			}
			if steady {
				if dir := sideDir(s, project); dir == "" || !sc.changedDir[dir] {
					if project {
						sc.fx.steady.addProject(s)
					} else {
						sc.fx.steady.add(s, dir)
					}
					continue
				}
			}
			c := sc.byID[s.ks.Key()]
			if c == nil {
				c = &component{project: project}
				sc.byID[s.ks.Key()] = c
			}
			if side == 0 {
				c.base = s
			} else {
				c.head = s
				if steady {
					c.base = s
				}
			}
		}
	}
}

// fluxSide reads a document of a Flux file as a component's or a project's
// Kustomization with its source; false for any other document.
func (sc *fluxScan) fluxSide(d *fluxDoc, f *fluxFile, oci *ociIndex) (s *fluxSide, project, ok bool) {
	o := &d.obj
	if !d.ok || o.Kind != "Kustomization" || !strings.HasPrefix(str(o.Obj["apiVersion"]), "kustomize.toolkit.fluxcd.io/") {
		return nil, false, false
	}
	ref := get(o.Obj, "spec", "sourceRef")
	s = &fluxSide{ks: o, kind: str(get(ref, "kind"))}
	if s.kind == "OCIRepository" {
		id := fleet.ObjectKey(o.OnCluster(), "OCIRepository", cmpOr(str(get(ref, "namespace")), o.Namespace), str(get(ref, "name")))
		if r, ok := oci.find(f, id); ok && strings.HasPrefix(str(r.Obj["apiVersion"]), "source.toolkit.fluxcd.io/") {
			s.oci = r
		}
	}
	// A Kustomization without a component is a project's when it says so
	// or applies a project's folder (the scan of an unchanged file does
	// not read the project label).
	if labelOf(*o, layout.LabelComponent) == "" {
		if labelOf(*o, layout.LabelProject) == "" && projectDir(s) == "" {
			return nil, false, false
		}
		project = true
	}
	if s.kind == "GitRepository" && sc.fx.sourceName == "" {
		sc.fx.sourceName = str(get(ref, "name"))
	}
	return s, project, true
}

// place sets each component's folder and key, and returns the components
// whose pinned digest is checked against their folder.
func (sc *fluxScan) place() (check []*component) {
	for _, c := range sc.byID {
		c.dir = sideDir(c.head, c.project)
		if c.dir == "" {
			c.dir = sideDir(c.base, c.project)
		}
		c.key = strings.TrimPrefix(c.dir, layout.AppsDir+"/")
		if c.project {
			c.key = path.Dir(c.key)
		}
		if c.dir == "" {
			s := c.head
			if s == nil {
				s = c.base
			}
			c.key = s.ks.Namespace + "/" + s.ks.Name
		}
		c.folderChanged = c.dir != "" && sc.changedDir[c.dir]
		h, b := c.head, c.base
		switch {
		case h == nil, h == b && !c.folderChanged:
		case h.readsOCI() && h.oci == nil:
			if sc.changedFile[h.ks.File] {
				ref := get(h.ks.Obj, "spec", "sourceRef")
				sc.fx.danger = append(sc.fx.danger, fmt.Sprintf("%s: its Kustomization %s reads OCIRepository %s, which the fleet does not hold: Flux cannot apply it",
					c.what(), name(*h.ks), code(cmpOr(str(get(ref, "namespace")), h.ks.Namespace)+"/"+str(get(ref, "name")))))
			}
		case h.oci != nil && (b == nil || b.oci == nil || c.folderChanged || b.digest() != h.digest()):
			check = append(check, c)
		}
	}
	return check
}

// explained is what each component's change explains of its Flux objects'
// diffs: fields by object id, and OCIRepositories added or removed by a
// move between sources.
type explained struct {
	fields             map[string][][]string
	addedOK, removedOK map[string]bool
}

// explain says what each side says of each component, and what of the
// change is a consequence.
func (sc *fluxScan) explain(removedApps map[string]bool) explained {
	ex := explained{fields: map[string][][]string{}, addedOK: map[string]bool{}, removedOK: map[string]bool{}}
	for _, c := range sc.byID {
		b, h := c.base, c.head
		if b == nil || h == nil {
			if b != nil && b.oci != nil && removedApps[c.app()] {
				sc.fx.removedOCI[c.app()]++
			}
			continue
		}
		if b == h {
			continue // the same objects on both sides
		}
		c.migrated = b.sourceKind() != h.sourceKind() && (b.oci != nil && h.sourceKind() == "GitRepository" || h.oci != nil && b.sourceKind() == "GitRepository")
		c.ksChanged = !reflect.DeepEqual(sourceless(b.ks), sourceless(h.ks))
		if !reflect.DeepEqual(get(b.ks.Obj, "spec", "dependsOn"), get(h.ks.Obj, "spec", "dependsOn")) &&
			reflect.DeepEqual(withoutReadyExprs(b.ks), withoutReadyExprs(h.ks)) {
			c.pinsChanged = !c.migrated
			if !c.mismatch {
				ex.fields[h.ks.Key()] = append(ex.fields[h.ks.Key()], []string{"spec", "dependsOn"})
			}
		}
		if b.oci != nil && h.oci != nil {
			c.digestChanged = b.digest() != h.digest()
			if c.digestChanged && !c.mismatch {
				ex.fields[h.oci.Key()] = append(ex.fields[h.oci.Key()], []string{"spec", "ref", "digest"})
			}
		}
		if c.migrated && !c.mismatch {
			ex.fields[h.ks.Key()] = append(ex.fields[h.ks.Key()], []string{"spec", "path"}, []string{"spec", "sourceRef", "kind"}, []string{"spec", "sourceRef", "name"}, []string{"spec", "sourceRef", "namespace"})
			if h.oci != nil {
				ex.addedOK[h.oci.Key()] = true
			} else {
				ex.removedOK[b.oci.Key()] = true
			}
		}
	}
	// An OCIRepository that another Kustomization still reads stays.
	for _, c := range sc.byID {
		if c.head != nil && c.head.oci != nil {
			delete(ex.removedOK, c.head.oci.Key())
		}
	}
	return ex
}

// show keeps, for each changed Flux file, its base with the explained
// consequences applied: its diff against the head is what is left to show.
func (sc *fluxScan) show(changes []fleet.Change, ex explained) {
	fx := sc.fx
	for _, ch := range changes {
		bf, hf := sc.baseFiles[ch.Path], sc.headFiles[ch.Path]
		from, moved := fx.movedFrom[ch.Path]
		if moved {
			// The file's objects were in another file: what is left to
			// show is their change since, there.
			bf = sc.baseFiles[from]
		}
		if bf == nil || hf == nil {
			delete(fx.movedFrom, ch.Path)
			continue
		}
		if moved {
			fx.shown[from] = nil
		}
		fx.shown[ch.Path] = []byte(fx.consequencesApplied(bf, hf, ex.fields, ex.addedOK, ex.removedOK))
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// sideDir is the folder a side's Kustomization applies: a component's
// (componentDir) or a project's (projectDir).
func sideDir(s *fluxSide, project bool) string {
	if project {
		return projectDir(s)
	}
	return componentDir(s)
}

// projectDir is the folder a project's Kustomization applies: its
// OCIRepository's artifact path (the project's Flux folder), or the
// project folder its path ends with (apps/<cluster>/<project>/_project).
func projectDir(s *fluxSide) string {
	dir := appliedDir(s, 3)
	if dir == "" || (s.oci == nil && !strings.HasPrefix(path.Base(dir), "_")) {
		return ""
	}
	return dir
}

// appliedDir is the folder a side's Kustomization applies: its
// OCIRepository's artifact path, or the last depth+1 segments of its path
// when they are a folder under apps/.
func appliedDir(s *fluxSide, depth int) string {
	if s == nil {
		return ""
	}
	if s.oci != nil {
		return str(get(s.oci.Obj, "metadata", "annotations", artifactPathAnnotation))
	}
	p := strings.Trim(str(get(s.ks.Obj, "spec", "path")), "/")
	i := len(p)
	for range depth {
		if i = strings.LastIndexByte(p[:i], '/'); i < 0 {
			return ""
		}
	}
	dir := p[strings.LastIndexByte(p[:i], '/')+1:]
	if !strings.HasPrefix(dir, layout.AppsDir+"/") || strings.Contains(dir, "//") || path.Clean(dir) != dir {
		return ""
	}
	return dir
}

// componentDir is the folder a side's Kustomization applies: its
// OCIRepository's artifact path, or the component folder its path ends
// with.
func componentDir(s *fluxSide) string { return appliedDir(s, 4) }

// sourceless is a Kustomization's spec without where it reads from, and
// without the artifacts its dependsOn's readyExprs name, which follow the
// dependencies' folders and the source layout.
func sourceless(ks *object) map[string]any {
	spec, _ := ks.Obj["spec"].(map[string]any)
	out := without(spec, "sourceRef", "path")
	if deps := withoutReadyExprs(ks); deps != nil {
		out["dependsOn"] = deps
	}
	return out
}

// withoutReadyExprs is a Kustomization's dependsOn without readyExprs (nil
// when it has none): render writes one, naming the dependency's artifact,
// for each dependency on a component that reads its own.
func withoutReadyExprs(ks *object) []any {
	deps, _ := get(ks.Obj, "spec", "dependsOn").([]any)
	if deps == nil {
		return nil
	}
	out := make([]any, len(deps))
	for i, d := range deps {
		if m, ok := d.(map[string]any); ok {
			out[i] = without(m, "readyExpr")
		} else {
			out[i] = d
		}
	}
	return out
}

// checkDigests rebuilds the artifact of each component's folder from the
// head's files and flags the components whose OCIRepository pins another
// digest: the fleet commit would then make Flux deploy something other
// than what its Git files hold.
func (fx *fluxView) checkDigests(comps []*component, head map[string][]byte) {
	if len(comps) == 0 {
		return
	}
	files := map[string][]artifact.File{}
	for _, c := range comps {
		if c.dir != "" {
			files[c.dir] = nil
		}
	}
	for p, b := range head {
		// A component's folder is the first five segments
		// (layout.ComponentDirOf), a project's Flux folder the first four.
		i := 0
		for n := range 5 {
			j := strings.IndexByte(p[i:], '/')
			if j < 0 {
				break
			}
			i += j + 1
			if n < 3 {
				continue
			}
			if l, ok := files[p[:i-1]]; ok {
				files[p[:i-1]] = append(l, artifact.File{Name: p[i:], Data: b})
				break
			}
		}
	}
	for _, c := range comps {
		if d := checkDigest(c, files[c.dir]); d != "" {
			c.mismatch = true
			fx.danger = append(fx.danger, d)
		}
	}
}

// checkDigest says when a component's OCIRepository pins another digest
// than its folder's files build.
func checkDigest(c *component, files []artifact.File) string {
	oci := c.head.oci
	pinned := c.head.digest()
	where := fmt.Sprintf("%s: its OCIRepository %s", c.what(), name(*oci))
	if c.dir == "" {
		return fmt.Sprintf("%s does not name its folder (annotation `%s`): nobody can check that its digest %s is the folder's", where, artifactPathAnnotation, code(short(pinned)))
	}
	if len(files) == 0 {
		return fmt.Sprintf("%s reads the artifact of %s, a folder the fleet does not hold: Flux would deploy files that are not in Git", where, code(c.dir))
	}
	a, err := artifact.Build(c.dir, files)
	if err != nil {
		return fmt.Sprintf("%s: the artifact of %s cannot be built: %s", where, code(c.dir), md(err.Error()))
	}
	want := a.Digest.String()
	if want == pinned {
		return ""
	}
	var old string
	if c.base != nil {
		old = c.base.digest()
	}
	switch {
	case old != "" && old != pinned && !c.folderChanged:
		return fmt.Sprintf("%s now pins %s (was %s) but its folder %s does not change: the fleet commit would deploy something other than what its Git files say (they build %s)",
			where, code(short(pinned)), code(short(old)), code(c.dir), code(short(want)))
	case old == pinned && c.folderChanged:
		return fmt.Sprintf("%s still pins %s but its folder %s changes: Flux would keep applying the old artifact, not what the fleet's Git files say (they build %s)",
			where, code(short(pinned)), code(c.dir), code(short(want)))
	}
	return fmt.Sprintf("%s pins %s but its folder %s builds %s: the fleet commit would deploy something other than what its Git files say",
		where, code(short(pinned)), code(c.dir), code(short(want)))
}

// short is a digest cut to 12 hex digits, as a reviewer reads it.
func short(digest string) string {
	alg, hex, ok := strings.Cut(digest, ":")
	if !ok || len(hex) <= 12 {
		return digest
	}
	return alg + ":" + hex[:12]
}

// consequencesApplied writes the base of a changed Flux file with the
// head's values of the fields whose change is a consequence, the
// OCIRepositories a migration adds and without those it removes, in the
// head's order of objects: the diff of that against the head shows only
// what the reviewer needs to read. An object whose fields cannot be
// rewritten in its text (a format render does not write) is left as it
// is, and so shown whole.
func (fx *fluxView) consequencesApplied(bf, hf *fluxFile, explain map[string][][]string, addedOK, removedOK map[string]bool) string {
	baseDoc := map[string]fluxDoc{}
	for _, d := range bf.docs {
		if d.ok {
			baseDoc[d.obj.Key()] = d
		}
	}
	inHead := map[string]bool{}
	var docs []string
	for i, hd := range hf.docs {
		if !hd.ok {
			if i < len(bf.docs) && !bf.docs[i].ok {
				docs = append(docs, bf.docs[i].text)
			}
			continue
		}
		id := hd.obj.Key()
		inHead[id] = true
		bd, ok := baseDoc[id]
		switch {
		case ok && explain[id] != nil:
			text, quiet := rewrite(bd, hd, explain[id])
			docs = append(docs, text)
			if quiet {
				fx.quiet[id] = true
			}
		case ok:
			docs = append(docs, bd.text)
		case addedOK[id]:
			docs = append(docs, hd.text)
		}
	}
	for _, bd := range bf.docs {
		if bd.ok && !inHead[bd.obj.Key()] && !removedOK[bd.obj.Key()] {
			docs = append(docs, bd.text)
		}
	}
	return bf.text(docs)
}

// rewrite gives a base document the head's values of some fields: the
// head's text when nothing else differs (quiet), else the base's text
// with those fields' lines rewritten, when that reads back as the object
// expected; else the base's text.
func rewrite(bd, hd fluxDoc, fields [][]string) (text string, quiet bool) {
	want := deepCopy(bd.obj.Obj).(map[string]any)
	for _, f := range fields {
		set(want, f, get(hd.obj.Obj, anyPath(f)...))
	}
	if reflect.DeepEqual(want, hd.obj.Obj) {
		return hd.text, true
	}
	text = "\n" + bd.text + "\n"
	for _, f := range fields {
		ov, nv := get(bd.obj.Obj, anyPath(f)...), get(hd.obj.Obj, anyPath(f)...)
		os, ook := ov.(string)
		ns, nok := nv.(string)
		if reflect.DeepEqual(ov, nv) {
			continue
		}
		if ol, ok := ov.([]any); ok { // dependsOn, whose readyExprs name other digests
			var done bool
			if text, done = rewritePins(text, ol, nv); !done {
				return bd.text, false
			}
			continue
		}
		indent := strings.Repeat("  ", len(f)-1)
		line := func(v string) string { return "\n" + indent + f[len(f)-1] + ": " + v + "\n" }
		switch {
		case ook && nv == nil && strings.Count(text, line(os)) == 1: // the field goes
			text = strings.Replace(text, line(os), "\n", 1)
		case !ook || !nok || strings.Count(text, line(os)) != 1:
			return bd.text, false
		default:
			text = strings.Replace(text, line(os), line(ns), 1)
		}
	}
	text = text[1 : len(text)-1]
	if o, ok := parseObject(bd.obj.File, text); !ok || !reflect.DeepEqual(o.Obj, want) {
		return bd.text, false
	}
	return text, false
}

// rewritePins rewrites, in a document's text, the artifact digests that
// the readyExprs of two dependsOn lists name (layout.AppliedReadyExpr),
// where that is all that differs: each old digest must occur once in the
// text. The caller checks that the text reads back as the object expected.
func rewritePins(text string, ol []any, nv any) (string, bool) {
	nl, ok := nv.([]any)
	if !ok || len(nl) != len(ol) {
		return text, false
	}
	for i := range ol {
		om, ok1 := ol[i].(map[string]any)
		nm, ok2 := nl[i].(map[string]any)
		if !ok1 || !ok2 || !reflect.DeepEqual(without(om, "readyExpr"), without(nm, "readyExpr")) {
			return text, false
		}
		oe, _ := om["readyExpr"].(string)
		ne, _ := nm["readyExpr"].(string)
		if oe == ne {
			continue
		}
		from, ok1 := layout.ReadyExprDigest(oe)
		to, ok2 := layout.ReadyExprDigest(ne)
		if !ok1 || !ok2 || strings.Count(text, from) != 1 {
			return text, false
		}
		text = strings.Replace(text, from, to, 1)
	}
	return text, true
}

func anyPath(f []string) []any {
	out := make([]any, len(f))
	for i, s := range f {
		out[i] = s
	}
	return out
}

// set puts v at a path of map keys, making the maps on the way; nil
// removes the key.
func set(m map[string]any, f []string, v any) {
	for _, k := range f[:len(f)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			if v == nil {
				return
			}
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	if v == nil {
		delete(m, f[len(f)-1])
		return
	}
	m[f[len(f)-1]] = v
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

// counts are the head's components by what Flux does with them.
type counts struct {
	total, reconciled, changing, onGit, onOCI int
	toOCI, toGit, migratedChanging            int
	clusters                                  []string
	// keptOCI counts the OCIRepositories of the components moving back to
	// the GitRepository that Flux does not prune (prune: disabled).
	keptOCI int
	// projects, projectsReconciled and projectsOnOCI count the head's
	// project Kustomizations.
	projects, projectsReconciled, projectsOnOCI int
}

// addProject counts a project's Kustomization the change leaves alone.
func (n *counts) addProject(s *fluxSide) {
	n.projects++
	if s.kind == "GitRepository" {
		n.projectsReconciled++
	} else {
		n.projectsOnOCI++
	}
}

// add counts a component the change leaves alone.
func (n *counts) add(s *fluxSide, dir string) {
	n.total++
	if s.kind == "GitRepository" {
		n.onGit++
		n.reconciled++ // every fleet commit moves the GitRepository
	} else {
		n.onOCI++
	}
	cl := strings.TrimPrefix(dir, layout.AppsDir+"/")
	if i := strings.IndexByte(cl, '/'); i >= 0 && !slices.Contains(n.clusters, cl[:i]) {
		n.clusters = append(n.clusters, cl[:i])
	}
}

func (fx *fluxView) counts() counts {
	if fx.n != nil {
		return *fx.n
	}
	n := fx.steady
	n.clusters = slices.Clone(n.clusters)
	for _, c := range fx.comps {
		if c.head == nil {
			continue
		}
		if c.project {
			n.projects++
			if c.reconciled() {
				n.projectsReconciled++
			}
			if c.head.sourceKind() != "GitRepository" {
				n.projectsOnOCI++
			}
			continue
		}
		n.total++
		if cl, _, _ := strings.Cut(c.key, "/"); !slices.Contains(n.clusters, cl) {
			n.clusters = append(n.clusters, cl)
		}
		if c.reconciled() {
			n.reconciled++
		}
		if c.changes() {
			n.changing++
		}
		if c.head.sourceKind() == "GitRepository" {
			n.onGit++
		} else {
			n.onOCI++
		}
		if c.migrated {
			if c.head.oci != nil {
				n.toOCI++
			} else {
				n.toGit++
				if keptFromPrune(*c.base.oci) {
					n.keptOCI++
				}
			}
			if c.folderChanged || c.ksChanged {
				n.migratedChanging++
			}
		}
	}
	slices.Sort(n.clusters)
	fx.n = &n
	return n
}

// writeReconciled says in the summary how many components Flux reconciles
// for the change, and why.
func (fx *fluxView) writeReconciled(b *strings.Builder) {
	n := fx.counts()
	if n.total == 0 {
		return
	}
	of := fmt.Sprintf("of the fleet's %d clusters", len(n.clusters))
	if len(n.clusters) == 1 {
		of = "of cluster " + code(n.clusters[0])
	}
	// With a source per project, the project Kustomizations that apply
	// the apps' Flux objects are counted too.
	of += n.projectsPart()
	all := "all " + plural(n.total, "component")
	if n.total == 1 {
		all = "the one component"
	}
	switch {
	case n.onOCI == 0 && n.toGit > 0:
		fmt.Fprintf(b, "Flux reconciles **%s** %s: they move back to the fleet's one GitRepository (below), and from now on every fleet commit moves it and reconciles them all, changed or not.\n\n", all, of)
	case n.onOCI == 0:
		changing := "none of them changes: with `fleet.artifacts` in platform.yaml, each component would read its own OCI artifact and Flux would reconcile none"
		switch n.changing {
		case 1:
			changing = "1 of them changes: with `fleet.artifacts` in platform.yaml, each component would read its own OCI artifact and Flux would reconcile only that one"
		case 0:
		default:
			changing = fmt.Sprintf("%d of them change: with `fleet.artifacts` in platform.yaml, each component would read its own OCI artifact and Flux would reconcile only those %d", n.changing, n.changing)
		}
		fmt.Fprintf(b, "Flux reconciles **%s** %s, changed or not: they read the fleet's one GitRepository, which every fleet commit moves. %s.\n\n", all, of, strings.ToUpper(changing[:1])+changing[1:])
	case n.onGit == 0 && n.toOCI > 0:
		others := ""
		if k := n.reconciled - n.toOCI; k > 0 {
			others = fmt.Sprintf(", and the %d others this change touches", k)
			if k == 1 {
				others = ", and the other one this change touches"
			}
		}
		howMany := fmt.Sprintf("%d of the %s", n.reconciled, plural(n.total, "component"))
		if n.reconciled == n.total {
			howMany = all
		}
		moving := fmt.Sprintf("the %d that move to their own OCI source (below) reconcile once from it", n.toOCI)
		if n.toOCI == 1 {
			moving = "the one that moves to its own OCI source (below) reconciles once from it"
		}
		fmt.Fprintf(b, "Flux reconciles **%s** %s: %s%s. From then on, each component reads its own OCI artifact and a fleet commit reconciles only the components it changes.\n\n",
			howMany, of, moving, others)
	case n.onGit == 0:
		see := ""
		switch {
		case n.reconciled+n.projectsReconciled == 0:
		case n.projects > 0:
			see = ", listed under Flux sources"
		default:
			see = " (listed under Flux sources)"
		}
		how := "each reads its own OCI artifact, so Flux reconciles only the components a fleet commit changes"
		if n.projectsOnOCI > 0 {
			how = "each component reads its own OCI artifact, and each project's Kustomization its apps' Flux objects from the project's, " +
				"so besides the cluster's root Kustomization, Flux reconciles only what a fleet commit changes"
		}
		howMany := fmt.Sprintf("%d of the %s", n.reconciled, plural(n.total, "component"))
		switch n.reconciled {
		case n.total:
			howMany = all
		case 0:
			howMany = "none of the " + plural(n.total, "component")
		}
		fmt.Fprintf(b, "Flux reconciles **%s** %s%s: %s (without `fleet.artifacts`, it would reconcile %s).\n\n",
			howMany, of, see, how, all)
	default:
		fmt.Fprintf(b, "Flux reconciles **%d of the %s** %s: the %d that read the fleet's GitRepository (every fleet commit moves it) and, of the %d with their own OCI artifact, those this change touches.\n\n",
			n.reconciled, plural(n.total, "component"), of, n.onGit, n.onOCI)
	}
}

// writeSources writes the components' sources: the migration between the
// layouts and, for components with their own source, why Flux reconciles
// each.
func (fx *fluxView) writeSources(b *strings.Builder, removedApps map[string]bool) {
	n := fx.counts()
	toOCI, toGit, migratedChanging := n.toOCI, n.toGit, n.migratedChanging
	var out strings.Builder
	src := code(cmpOr(fx.sourceName, "flux-system"))
	nothing := "nothing is redeployed"
	if migratedChanging > 0 {
		nothing = fmt.Sprintf("nothing is redeployed but the changes of the %d whose files change too", migratedChanging)
		if migratedChanging == 1 {
			nothing = "nothing is redeployed but the changes of the one whose files change too"
		}
	}
	switch {
	case toOCI == 1:
		fmt.Fprintf(&out, "**Migration:** 1 component moves to its own OCI source (an OCIRepository pinned to the digest of its folder, in place of the GitRepository %s); its objects stay; %s.\n\n", src, nothing)
	case toOCI > 1:
		fmt.Fprintf(&out, "**Migration:** %d components move to their own OCI source (an OCIRepository pinned to the digest of the component's folder, in place of the GitRepository %s); their objects stay; %s.\n\n",
			toOCI, src, nothing)
	}
	switch {
	case toGit == 1:
		fmt.Fprintf(&out, "**Migration:** 1 component moves back to the fleet's GitRepository %s and its OCIRepository is removed; its objects stay; %s.\n\n", src, nothing)
	case toGit > 1:
		fmt.Fprintf(&out, "**Migration:** %d components move back to the fleet's GitRepository %s and their OCIRepositories are removed; their objects stay; %s.\n\n",
			toGit, src, nothing)
	}
	if n.keptOCI > 0 {
		// Going back between the two steps of the move to the projects'
		// sources: the first step marked the OCIRepositories too.
		stay := fmt.Sprintf("%d stay", n.keptOCI)
		if n.keptOCI == 1 {
			stay = "1 stays"
		}
		fmt.Fprintf(&out, "Of those OCIRepositories, %s in the cluster although the fleet no longer holds them: they are marked `%s` (the first step of the move to the projects' sources), so Flux does not prune them. "+
			"Nothing reads them; delete them by hand (`kubectl delete ocirepositories -n flux-system -l fleetwright.io/project=<project>`).\n\n",
			stay, layout.PruneDisabledLine)
	}
	fx.steps.writeSteps(&out)
	var rows, projects []string
	for _, c := range fx.comps {
		if c.project {
			if why := fx.projectRow(c); why != "" {
				projects = append(projects, fmt.Sprintf("| %s | %s |\n", cellCode(c.key), why))
			}
			continue
		}
		why := componentRow(c, removedApps)
		if why != "" {
			rows = append(rows, fmt.Sprintf("| %s | %s |\n", cellCode(c.key), why))
		}
	}
	if len(projects) > 0 {
		out.WriteString("| project | what Flux does |\n|---|---|\n")
		for _, r := range projects {
			out.WriteString(r)
		}
		out.WriteString("\n")
	}
	if len(rows) > 0 {
		out.WriteString("| component | what Flux does |\n|---|---|\n")
		for _, r := range rows {
			out.WriteString(r)
		}
		out.WriteString("\n")
	}
	if out.Len() > 0 {
		b.WriteString("### Flux sources\n\n")
		b.WriteString(out.String())
	}
}

// componentRow says what Flux does with a component's source, or "" when
// nothing worth a row.
func componentRow(c *component, removedApps map[string]bool) string {
	var why string
	switch {
	case c.head == nil:
		switch {
		case keptFromPrune(*c.base.ks):
			why = "removed from the fleet, but kept from pruning: Flux leaves it and its objects (see Danger)"
		case c.base.oci != nil && !removedApps[c.app()]:
			why = "removed: its OCIRepository goes with its Kustomization, which prunes its objects"
		}
	case c.unsafeMove:
		why = "pruned by the root Kustomization with its objects, then created again from its project's source (see Danger)"
	case c.head.oci == nil || c.mismatch:
	case c.base == nil:
		why = fmt.Sprintf("new: pulls its artifact %s", cellCode(short(c.head.digest())))
	case c.migrated && c.folderChanged:
		why = fmt.Sprintf("moves to its own OCI source, with a new artifact %s", cellCode(short(c.head.digest())))
	case c.migrated:
		if c.ksChanged {
			why = "moves to its own OCI source, and its Kustomization changes"
		}
	case c.digestChanged:
		why = fmt.Sprintf("pulls its new artifact %s", cellCode(short(c.head.digest())))
		if c.ksChanged {
			why += "; its Kustomization changes too"
		}
		if c.pinsChanged {
			why += "; applied once its dependencies have applied their new artifacts"
		}
	case c.ksChanged:
		why = "its Kustomization changes: reconciled with the same artifact"
	case c.pinsChanged:
		why = "reconciled with the same artifact once its dependencies have applied their new artifacts"
	}
	return why
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if w, ok := strings.CutSuffix(what, "y"); ok {
		return fmt.Sprintf("%d %sies", n, w)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

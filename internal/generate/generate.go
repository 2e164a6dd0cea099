package generate

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/manifest"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Options configure a render.
type Options struct {
	// Platform settings, with defaults applied.
	Platform *spec.Platform
	// FleetPath is the fleet's folder inside the Git repository that Flux
	// reads; Kustomization paths start with it. Default: Platform.Fleet.Path.
	FleetPath string
	// SpecRevision returns the commit that last changed an app's spec, or ""
	// when unknown (no annotation is written then).
	SpecRevision func(a *load.LoadedApp) string
	// Images maps a workload's graph node id (spec.NodeID) to the image to
	// run, when it differs from the spec (built or pinned by digest).
	Images map[string]string
	// Workers bounds parallel rendering (default GOMAXPROCS).
	Workers int
	// Reuse, when set, is asked before each app is generated, with the
	// digest of everything its files are generated from, whether the files
	// generated from that digest before are still in place; when it answers
	// true, the app is not generated and is listed in Fleet.Reused instead.
	Reuse func(app string, d Digest) bool
	// Previous reads a file of the fleet as it is before this render (false
	// when it has none): with a source per project (see projectSources),
	// the Flux files of reused apps, which go into their project's
	// artifact, and whether the root Kustomization still applies an app's
	// Flux objects from the cluster folder, which decides how they move to
	// the project's (see placement). Without it, a fleet is written as if
	// new.
	Previous func(path string) ([]byte, bool)
	// PreviousDir lists the files of the fleet as it is directly in the
	// folder dir (paths from the fleet root, sorted): the projects' files
	// of each cluster, which tell what a project whose last app went still
	// needs (see emptied). Without it, a project without apps is simply
	// left out.
	PreviousDir func(dir string) []string
	// Prefix is a folder of the fleet that the files of this render go
	// under (a preview's, see RenderPreview): the folders the components'
	// and projects' artifacts are named after, and that their
	// OCIRepositories name, are under it. The files' paths are not: the
	// caller moves them.
	Prefix string
	// Promote, for an app's copy in an environment with promote_from,
	// says whether this render promotes it (true: it is generated, and its
	// release file records the promotion). The copies it does not promote
	// keep the files the fleet has (Previous), by their release file; a
	// copy the fleet has no release of is not in its environment yet.
	Promote func(a *load.LoadedApp) (Promotion, bool)
}

// Over makes the render one over the fleet files (contents by slash path),
// as render's is over the fleet folder: Previous and PreviousDir read
// them. A nil map leaves both unset, for a new fleet.
func (o *Options) Over(files map[string][]byte) {
	if files != nil {
		o.Previous, o.PreviousDir = FileIn(files), FilesIn(files)
	}
}

// FileIn is Options.Previous over the fleet files by path.
func FileIn(files map[string][]byte) func(path string) ([]byte, bool) {
	return func(p string) ([]byte, bool) {
		b, ok := files[p]
		return b, ok
	}
}

// FilesIn is Options.PreviousDir over the fleet files by path.
func FilesIn(files map[string][]byte) func(dir string) []string {
	return func(dir string) []string {
		var out []string
		for p := range files {
			if path.Dir(p) == dir {
				out = append(out, p)
			}
		}
		slices.Sort(out)
		return out
	}
}

// File is one generated file.
type File struct {
	Path string // slash path relative to the fleet root
	Data []byte
	// App is the cluster/project/name key of the app the file belongs to;
	// "" for project files.
	App string
}

// Fleet is the whole generated tree, sorted by path.
type Fleet struct {
	Files []File
	// Digests holds the digest of each generated app, by app key, when
	// digests could be computed (see Digest).
	Digests map[string]Digest
	// Reused lists the apps that Options.Reuse kept, sorted; their files
	// are not in Files.
	Reused []string
	// ProjectArtifacts are the artifacts of the projects' Flux files (a
	// source per project), sorted by folder.
	ProjectArtifacts []*artifact.Artifact
	// Preparing lists the apps whose Flux objects stay where they are this
	// time, before the next render moves them: in the cluster folder,
	// marked so that the root Kustomization does not prune them, on their
	// way to their project's source; in the Flux namespace, with
	// spec.prune: false, on their way to their project's namespace (see
	// tenancy.go). Sorted.
	Preparing []string
	// prefix is the folder the files of a preview are under (see
	// Options.Prefix), "" for other fleets.
	prefix string
	// Emptied lists the projects (cluster/project) whose last app went:
	// their file holds their Namespace, account and binding this time,
	// and the next render removes it (see emptied). Sorted.
	Emptied []string
}

// Map returns the files by path.
func (f *Fleet) Map() map[string][]byte {
	m := make(map[string][]byte, len(f.Files))
	for _, x := range f.Files {
		m[x.Path] = x.Data
	}
	return m
}

// Render generates the fleet for every app of repo. repo must be valid
// (loaded without errors).
func Render(repo *load.Repo, opts Options) (*Fleet, error) {
	if opts.Platform == nil {
		opts.Platform = &repo.Platform
	}
	if opts.FleetPath == "" {
		opts.FleetPath = opts.Platform.Fleet.Path
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	r := &renderer{opts: opts, repo: repo, apps: make(map[string]*load.LoadedApp, len(repo.Apps)), compOrder: map[string][]string{}}
	for _, a := range repo.Apps {
		r.apps[a.Key()] = a
		if a.PreviewProject != "" {
			if r.previews == nil {
				r.previews = map[string]*load.LoadedApp{}
			}
			r.previews[a.Project] = a
		}
	}
	// Each app's components in the graph's order, from one pass over it.
	for _, id := range repo.Order {
		i := strings.LastIndexByte(id, '/')
		r.compOrder[id[:i]] = append(r.compOrder[id[:i]], id[i+1:])
	}

	var dg *digester
	if opts.Reuse != nil {
		dg = newDigester(r, repo.Apps, workers)
	}
	places := make([]placement, len(repo.Apps))
	for i, a := range repo.Apps {
		places[i] = r.placement(a)
	}
	staying := r.planMove(repo.Apps, places)
	results, errs, digests, reused := r.renderApps(repo.Apps, places, dg, workers)

	fl := &Fleet{}
	n := 0
	for _, fs := range results {
		n += len(fs)
	}
	files := make([]File, 0, n)
	projects := map[[2]string]bool{}
	for i, a := range repo.Apps {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s: %w", a.Doc.File, errs[i])
		}
		files = append(files, results[i]...)
		if len(results[i]) == 0 && !reused[i] {
			continue // a copy not promoted into its environment yet
		}
		projects[[2]string{a.Cluster, a.Project}] = true
		if places[i] == placePrepare {
			fl.Preparing = append(fl.Preparing, a.Key())
		}
		switch {
		case reused[i]:
			fl.Reused = append(fl.Reused, a.Key())
		case digests[i] != nil:
			if fl.Digests == nil {
				fl.Digests = map[string]Digest{}
			}
			fl.Digests[a.Key()] = *digests[i]
		}
	}
	slices.Sort(fl.Reused)
	fl.Preparing = append(fl.Preparing, staying...)
	slices.Sort(fl.Preparing)
	fl.Preparing = slices.Compact(fl.Preparing)
	files, err := r.projectFiles(projects, files, fl)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	fl.Files = files
	return fl, nil
}

// renderApps generates the apps on workers goroutines: each app's files
// (kept, for a copy of an environment that changes only by promotion),
// or nothing when the fleet still holds what its digest made (reused).
func (r *renderer) renderApps(apps []*load.LoadedApp, places []placement, dg *digester, workers int) (results [][]File, errs []error, digests []*Digest, reused []bool) {
	results, errs = make([][]File, len(apps)), make([]error, len(apps))
	digests, reused = make([]*Digest, len(apps)), make([]bool, len(apps))
	var wg sync.WaitGroup
	next := make(chan int, 256)
	for range workers {
		wg.Go(func() {
			for i := range next {
				a := apps[i]
				if r.kept(a) {
					results[i], errs[i] = r.keep(a)
					continue
				}
				if dg != nil && (places[i] == placeCluster || places[i] == placeProject) && !r.stayed[a.Key()] {
					if d, ok := dg.digest(r, a); ok {
						if r.opts.Reuse(a.Key(), d) {
							reused[i] = true
							continue
						}
						digests[i] = &d
					}
				}
				results[i], errs[i] = r.app(a, places[i])
				if errs[i] == nil && r.recordsReleases(a.Environment) {
					var rf File
					rf, errs[i] = r.release(a, results[i])
					results[i] = append(results[i], rf)
				}
			}
		})
	}
	for i := range apps {
		next <- i
	}
	close(next)
	wg.Wait()

	return results, errs, digests, reused
}

// projectFiles adds the files of each project with apps (its Namespace,
// account and binding, and with a source per project its artifact), in
// cluster and project order, then those of the projects emptied since the
// last render, to files.
func (r *renderer) projectFiles(projects map[[2]string]bool, files []File, fl *Fleet) ([]File, error) {
	keys := slices.SortedFunc(maps.Keys(projects), func(a, b [2]string) int {
		return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]))
	})
	var generated map[string][]artifact.File
	for _, k := range keys {
		var art *artifact.Artifact
		if r.projectSources(k[0]) {
			if generated == nil {
				generated = fluxFiles(files)
			}
			var err error
			if art, err = r.projectArtifact(k[0], k[1], generated, fl.Reused); err != nil {
				return nil, err
			}
		}
		pf, err := r.project(k[0], k[1], art)
		if err != nil {
			return nil, err
		}
		files = append(files, pf...)
		if art != nil {
			fl.ProjectArtifacts = append(fl.ProjectArtifacts, art)
		}
	}
	ef, err := r.emptied(projects)
	if err != nil {
		return nil, err
	}
	for _, f := range ef {
		files = append(files, f.File)
		fl.Emptied = append(fl.Emptied, f.Key)
	}
	return files, nil
}

// AppFiles returns what the fleet index remembers of each generated app
// whose digest is known: the digest and the paths of its files.
func (f *Fleet) AppFiles() map[string]fleet.AppFiles {
	m := make(map[string]fleet.AppFiles, len(f.Digests))
	for _, x := range f.Files {
		d, ok := f.Digests[x.App]
		if !ok {
			continue
		}
		af := m[x.App]
		af.Digest = d
		af.Paths = append(af.Paths, x.Path)
		m[x.App] = af
	}
	return m
}

type renderer struct {
	opts      Options
	repo      *load.Repo
	apps      map[string]*load.LoadedApp // by Key
	compOrder map[string][]string        // app Key → component names, dependencies first
	// stayed holds the apps whose Flux objects stay in the Flux namespace
	// this render, stayedProjects the projects whose own source does (see
	// tenancy.go); set by planMove before the apps are generated.
	stayed         map[string]bool
	stayedProjects map[[2]string]bool
	// previews maps the preview namespace of each app's copy in a pull
	// request's preview to that copy (spec.LoadedApp.PreviewProject).
	previews map[string]*load.LoadedApp
}

// object is one Kubernetes object and the file it goes to.
type object struct {
	kind, name string
	obj        any
}

// KustomizationName is the name of a component's Flux Kustomization.
func KustomizationName(project, app, component string) string {
	return layout.ComponentFluxName(project, app, component)
}

func projectKustomizationName(project string) string { return layout.ProjectFluxName(project) }

func (r *renderer) app(a *load.LoadedApp, place placement) ([]File, error) {
	key := a.Key()
	var files []File
	var ks []any
	pins := map[string]string{} // component Kustomization → the digest its OCIRepository pins
	for _, c := range r.order(a) {
		dir := layout.ComponentDir(a.Cluster, a.Project, a.Spec.Name, c.Name)
		first := len(files)
		var err error
		files, err = r.componentFiles(files, a, c, dir)
		if err != nil {
			return nil, err
		}
		k := r.fluxKustomization(a, c)
		if r.opts.Platform.Fleet.Artifacts != nil {
			art, err := componentArtifact(path.Join(r.opts.Prefix, dir), dir, files[first:])
			if err != nil {
				return nil, fmt.Errorf("component %s: %w", c.Name, err)
			}
			ks = append(ks, r.ociRepository(k.Namespace, k.Name, labels(a, c.Name), r.eventAnnotations(a, c.Name), dir, art.Digest.String()))
			k.Spec.SourceRef = kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: k.Name}
			k.Spec.Path = "./"
			pins[k.Name] = art.Digest.String()
			for i, d := range k.Spec.DependsOn {
				if pin, ok := pins[d.Name]; ok { // dependencies come first (r.order)
					k.Spec.DependsOn[i].ReadyExpr = layout.AppliedReadyExpr(pin)
				}
			}
		}
		ks = append(ks, k)
	}
	if place == placePrepare {
		keepFromPrune(ks)
	}
	data, err := manifest.Document(ks...)
	if err != nil {
		return nil, err
	}
	files = append(files, File{Path: r.appFluxFile(a, place), Data: append([]byte(manifest.Header), data...), App: key})
	return files, nil
}

func encode(obj any) ([]byte, error) {
	// Encode into a reused buffer, then keep an exact-size copy: one
	// allocation per file instead of a growing buffer and a second copy.
	b := encodeBufs.Get().(*bytes.Buffer)
	defer encodeBufs.Put(b)
	b.Reset()
	b.WriteString(manifest.Header)
	if err := manifest.Append(b, obj); err != nil {
		return nil, err
	}
	return bytes.Clone(b.Bytes()), nil
}

var encodeBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// order returns the app's components, dependencies first (ties by name).
func (r *renderer) order(a *load.LoadedApp) []*spec.Component {
	var out []*spec.Component
	for _, name := range r.compOrder[a.Key()] {
		out = append(out, a.Component(name))
	}
	if len(out) != len(a.Spec.Components) { // repo built without a graph
		out = out[:0]
		for i := range a.Spec.Components {
			out = append(out, &a.Spec.Components[i])
		}
	}
	return out
}

func (r *renderer) component(a *load.LoadedApp, c *spec.Component) ([]object, error) {
	switch c.Type {
	case spec.TypeWorkload, spec.TypeJob, spec.TypeCronJob:
		return r.workload(a, c)
	case spec.TypeAddon:
		return r.addon(a, c)
	}
	return nil, fmt.Errorf("unknown component type %q", c.Type)
}

// labels are the labels of every object of a component; with platform
// environments, they name the app's environment too.
func labels(a *load.LoadedApp, component string) map[string]string {
	l := map[string]string{
		layout.LabelName:      component,
		layout.LabelInstance:  objectName(a, component),
		layout.LabelPartOf:    a.Spec.Name,
		layout.LabelManagedBy: layout.ManagedBy,
		layout.LabelApp:       a.Spec.Name,
		layout.LabelProject:   a.ProjectName(),
		layout.LabelComponent: component,
	}
	if a.Environment != "" {
		l[layout.LabelEnvironment] = a.Environment
	}
	return l
}

// selector picks a workload's pods; it must never change for a Deployment.
func selector(a *load.LoadedApp, component string) map[string]string {
	return map[string]string{layout.LabelName: component, layout.LabelInstance: objectName(a, component)}
}

func objectName(a *load.LoadedApp, component string) string {
	return layout.ObjectName(a.Spec.Name, component)
}

func itoa(i int) string { return strconv.Itoa(i) }

// patches are a component's kustomize patches, as its kustomization.yaml
// lists them: Flux's kustomize build applies them to the component's
// objects. A strategic merge patch without a target is given one from its
// own kind and name: kustomize matches an untargeted patch by namespace
// too, and the objects carry the project's, which the patch does not.
func patches(ps []spec.Patch) ([]any, error) {
	out := make([]any, 0, len(ps))
	for i, p := range ps {
		m := map[string]any{"patch": p.Patch}
		t := p.Target
		if t == nil {
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(p.Patch), &head); err != nil || head.Kind == "" || head.Metadata.Name == "" {
				return nil, fmt.Errorf("patches[%d]: without a target, the patch must be a strategic merge patch naming its kind and metadata.name", i)
			}
			t = &spec.PatchTarget{Kind: head.Kind, Name: head.Metadata.Name}
			if g, v, ok := strings.Cut(head.APIVersion, "/"); ok {
				t.Group, t.Version = g, v
			} else {
				t.Version = head.APIVersion
			}
		}
		tm := map[string]any{}
		for k, v := range map[string]string{
			"group": t.Group, "version": t.Version, "kind": t.Kind, "name": t.Name,
			"labelSelector": t.LabelSelector, "annotationSelector": t.AnnotationSelector,
		} {
			if v != "" {
				tm[k] = v
			}
		}
		m["target"] = tm
		out = append(out, m)
	}
	return out, nil
}

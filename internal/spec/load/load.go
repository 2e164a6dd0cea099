package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/graph"
	"github.com/fleetwright/fleetwright/internal/hint"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/template"
)

// Documented defaults used when platform.yaml does not set a field.
const (
	DefaultAppsDomain      = "apps.example.com"
	DefaultIssuer          = "letsencrypt"
	DefaultCluster         = "default"
	DefaultFleetPath       = "fleet"
	DefaultSourceName      = "flux-system"
	DefaultSourceNamespace = "flux-system"
	DefaultTimeout         = 10 * time.Minute
)

// SpecFileNames are the names an app spec may have.
var SpecFileNames = []string{"app.yaml", "app.yml", "app.json"}

// PlatformFileNames are the names of the platform file at the repository root.
var PlatformFileNames = []string{"platform.yaml", "platform.yml", "platform.json"}

// ExportCatalog tells which exports an addon type publishes.
type ExportCatalog interface {
	// AddonExportKeys returns the export keys of a known addon type, sorted,
	// and which of them come from a Secret; ok is false for an unknown type.
	AddonExportKeys(addonType string) (keys []string, secret map[string]bool, ok bool)
}

// WorkloadExportKeys are the exports every workload with a port publishes.
// (exports.WorkloadKeys holds the same list.)
var WorkloadExportKeys = []string{"address", "host", "port", "url"}

// LoadedApp is an app spec read from a file, with its resolved settings.
type LoadedApp struct {
	Spec    spec.App
	Doc     *Document
	File    string // slash path inside the repository, such as apps/shop/my-api/app.yaml
	Project string
	Cluster string
	Timeout time.Duration
	// Environment is the platform environment this copy of the app is
	// for ("" when platform.yaml declares none); Cluster is its cluster.
	Environment string
	// PreviewProject is, for the copy of an app in a pull request's
	// preview (spec.Preview), the project the app belongs to: Project is
	// then the preview's namespace, <project>-pr<N>.
	PreviewProject string

	written *LoadedApp // the app as written, for a copy with an environment's overrides
}

// Key identifies the app in its cluster: cluster/project/name.
func (a *LoadedApp) Key() string { return a.App().Key() }

// Ref names the app as users do: project/name (layout.AppRef.Ref).
func (a *LoadedApp) Ref() string { return a.App().Ref() }

// App names the app in the fleet's layout.
func (a *LoadedApp) App() layout.App {
	return layout.App{Cluster: a.Cluster, AppRef: layout.AppRef{Project: a.Project, Name: a.Spec.Name}}
}

// Component returns the component named name, or nil.
func (a *LoadedApp) Component(name string) *spec.Component {
	for i := range a.Spec.Components {
		if a.Spec.Components[i].Name == name {
			return &a.Spec.Components[i]
		}
	}
	return nil
}

// Repo is an apps repository: its platform settings and its apps.
type Repo struct {
	Platform    spec.Platform // with defaults applied
	PlatformDoc *Document
	Apps        []*LoadedApp // sorted by cluster, project and name
	// Graph has a node per component, named cluster/project/app/component;
	// an edge from A to B means A needs B first.
	Graph *graph.Graph
	// Order lists every component node, dependencies first, ties by name.
	Order []string
}

// App returns the app with the given cluster, project and name, or nil.
func (r *Repo) App(cluster, project, name string) *LoadedApp {
	key := layout.App{Cluster: cluster, AppRef: layout.AppRef{Project: project, Name: name}}.Key()
	i, ok := slices.BinarySearchFunc(r.Apps, key, func(a *LoadedApp, k string) int {
		return strings.Compare(a.Key(), k)
	})
	if !ok {
		return nil
	}
	return r.Apps[i]
}

// NodeID names a component in the graph.
func NodeID(a *LoadedApp, component string) string { return a.Key() + "/" + component }

// Loader reads and validates an apps repository.
type Loader struct {
	// Exports knows the addon types; nil accepts only generic addons.
	Exports ExportCatalog
	// Prefix is put before file names in problems (the repository's path as
	// the user gave it).
	Prefix string

	schemas   *schemas
	templates templateCache
	checks    Checks
}

// Checks are the checks of what Load reads, beyond the schema's: each is
// called on what was read, and adds what it finds to ps.
type Checks interface {
	// Platform checks the platform file (doc) as read into p.
	Platform(p *spec.Platform, doc *Document, ps *Problems)
	// App checks an app as read, and each environment's copy of it.
	App(a *LoadedApp, plat *spec.Platform, ps *Problems)
	// Replicas checks the replicas of an environment's copy of a
	// component, at the path of its workload_spec.
	Replicas(a *LoadedApp, c *spec.Component, at Path, plat *spec.Platform, ps *Problems)
	// Repo checks the apps together: names, hosts, links between apps,
	// the graph.
	Repo(repo *Repo, ps *Problems)
}

// NewLoader compiles the schemas once; reuse the loader for many loads.
// Its loads make checks (validate.NewLoader gives the project's); with nil
// they check the files against the schema only.
func NewLoader(exports ExportCatalog, prefix string, checks Checks) (*Loader, error) {
	s, err := compileSchemas()
	if err != nil {
		return nil, fmt.Errorf("compiling the committed schemas: %w", err)
	}
	if checks == nil {
		checks = schemaOnly{}
	}
	return &Loader{Exports: exports, Prefix: prefix, schemas: s, checks: checks}, nil
}

// schemaOnly makes no checks beyond the schema's.
type schemaOnly struct{}

func (schemaOnly) Platform(*spec.Platform, *Document, *Problems)                         {}
func (schemaOnly) App(*LoadedApp, *spec.Platform, *Problems)                             {}
func (schemaOnly) Replicas(*LoadedApp, *spec.Component, Path, *spec.Platform, *Problems) {}
func (schemaOnly) Repo(*Repo, *Problems)                                                 {}

func (l *Loader) display(p string) string {
	if l.Prefix == "" || l.Prefix == "." {
		return p
	}
	return path.Join(l.Prefix, p)
}

// Load reads platform.yaml and every apps/**/app.{yaml,yml,json} of fsys,
// validates them, and builds the component graph. It returns every problem
// found; the repo is usable only when the problems hold no error.
func (l *Loader) Load(fsys fs.FS) (*Repo, Problems) {
	var ps Problems
	repo := &Repo{Graph: graph.New()}
	repo.Platform, repo.PlatformDoc = l.loadPlatform(fsys, &ps)

	files, linkedDirs, fileLinks, err := findSpecs(fsys)
	if err != nil {
		ps.AddErr(l.display("apps"), err)
	}
	for _, d := range linkedDirs {
		l.linkedFolder(fsys, d, &ps)
	}
	// Two spec files in one folder (app.yaml and app.json): keep the first
	// by name and report the others on themselves.
	files = l.oneSpecPerFolder(files, &ps)
	// Read and check the files in parallel: most of the time is spent
	// waiting for the disk and parsing YAML.
	apps := make([][]*LoadedApp, len(files))
	problems := make([]Problems, len(files))
	var wg sync.WaitGroup
	next := make(chan int, 64)
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				if a := l.loadApp(fsys, files[i], &repo.Platform, &problems[i]); a != nil {
					apps[i] = l.environments(fsys, a, &repo.Platform, slices.Clip(problems[i]), &problems[i])
				}
			}
		})
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, a := range apps {
		ps = append(ps, problems[i]...)
		repo.Apps = append(repo.Apps, a...)
	}
	slices.SortStableFunc(repo.Apps, func(a, b *LoadedApp) int {
		return strings.Compare(a.Key(), b.Key())
	})
	l.checks.Repo(repo, &ps)
	l.escapingFileLinks(fsys, fileLinks, &ps)
	return repo, ps.Sort()
}

// LoadFiles reads specs given as bytes by slash path, as from a Git tree.
func (l *Loader) LoadFiles(files map[string][]byte) (*Repo, Problems) {
	return l.Load(newMemFS(files))
}

// LoadTree reads specs given as bytes by slash path and the symbolic links
// among them (a path and its target, as Git keeps a link), which it follows
// and refuses as it does on disk.
func (l *Loader) LoadTree(files map[string][]byte, links map[string]string) (*Repo, Problems) {
	return l.Load(newMemFSLinks(files, links))
}

// ReadFiles reads from fsys every file Load reads, by slash path: the
// platform file, each app spec under apps/, the config files the specs
// name (files[].from) and each template under templates/. LoadFiles of the
// result loads what Load of fsys would.
func ReadFiles(fsys fs.FS) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, n := range PlatformFileNames {
		if b, err := fs.ReadFile(fsys, n); err == nil {
			files[n] = b
		}
	}
	specs, _, _, err := findSpecs(fsys)
	if err != nil {
		return nil, err
	}
	for _, p := range specs {
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		files[p] = b
		if !bytes.Contains(b, []byte("from")) {
			continue
		}
		if doc, err := Parse(p, b); err == nil {
			for _, from := range fromFiles(p, doc.Value) {
				if _, done := files[from]; done || escapingLink(fsys, from, false) != "" {
					continue
				}
				if fi, err := fs.Stat(fsys, from); err == nil && fi.Mode().IsRegular() && fi.Size() <= MaxConfigFile {
					if b, err := fs.ReadFile(fsys, from); err == nil {
						files[from] = b
					}
				}
			}
		}
	}
	for _, name := range templateNames(fsys) {
		for _, n := range template.FileNames {
			p := path.Join(TemplateDir(name), n)
			if b, err := fs.ReadFile(fsys, p); err == nil {
				files[p] = b
			}
		}
	}
	return files, nil
}

func (l *Loader) oneSpecPerFolder(files []string, ps *Problems) []string {
	out := files[:0:0]
	for i, f := range files {
		if i > 0 && path.Dir(files[i-1]) == path.Dir(f) {
			*ps = append(*ps, problem(l.display(f), Pos{1, 1}, fmt.Sprintf("%s and %s are both in %s; keep one", path.Base(files[i-1]), path.Base(f), path.Dir(f))))
			continue
		}
		out = append(out, f)
	}
	return out
}

// findSpecs returns the spec files under apps/ and the symbolic links to
// folders there, which the walk does not follow.
func findSpecs(fsys fs.FS) (files, linkedDirs, fileLinks []string, err error) {
	err = fs.WalkDir(fsys, "apps", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == "apps" {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != "apps" {
			return fs.SkipDir
		}
		if !d.IsDir() && slices.Contains(SpecFileNames, d.Name()) {
			files = append(files, p)
		} else if d.Type()&fs.ModeSymlink != 0 {
			if fi, err := fs.Stat(fsys, p); err == nil && fi.IsDir() {
				if !strings.HasPrefix(d.Name(), ".") {
					linkedDirs = append(linkedDirs, p)
				}
			} else {
				fileLinks = append(fileLinks, p)
			}
		}
		return nil
	})
	slices.Sort(files)
	return files, linkedDirs, fileLinks, err
}

// readDoc reads and parses the file p, which is at the top of fsys or was
// found by walking its folders (so that they are no symbolic links).
func (l *Loader) readDoc(fsys fs.FS, p string, ps *Problems) *Document {
	if !l.checkLinks(fsys, p, true, ps) {
		return nil
	}
	// One open per file: read at most one byte past the limit.
	f, err := fsys.Open(p)
	if err != nil {
		ps.AddErr(l.display(p), err)
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	f.Close()
	if err != nil {
		ps.AddErr(l.display(p), err)
		return nil
	}
	if len(data) > MaxFileSize {
		ps.AddErr(l.display(p), fmt.Errorf("file is larger than the limit of %d bytes", MaxFileSize))
		return nil
	}
	doc, err := Parse(l.display(p), data)
	if err != nil {
		ps.AddErr(l.display(p), err)
		return nil
	}
	return doc
}

func (l *Loader) loadPlatform(fsys fs.FS, ps *Problems) (spec.Platform, *Document) {
	var p spec.Platform
	var doc *Document
	for _, name := range PlatformFileNames {
		if _, err := fs.Stat(fsys, name); err == nil {
			if doc != nil {
				ps.Add(doc, nil, "both %s and %s exist; keep one", path.Base(doc.File), name)
				break
			}
			doc = l.readDoc(fsys, name, ps)
			if doc == nil {
				break
			}
		}
	}
	if doc != nil {
		if _, isMap := doc.Value.(map[string]any); !isMap && doc.Value != nil {
			ps.Add(doc, nil, "platform file must be a map of settings")
		} else if doc.Value != nil {
			l.schemas.check(l.schemas.platform, doc, ps)
			decode(doc, &p)
			l.checks.Platform(&p, doc, ps)
		}
	}
	ApplyPlatformDefaults(&p)
	return p, doc
}

// ApplyPlatformDefaults fills unset platform fields with the documented defaults.
func ApplyPlatformDefaults(p *spec.Platform) {
	spec.MergeProjectDefaults(p)
	spec.EnvironmentClusters(p)
	if p.AppsDomain == "" {
		p.AppsDomain = DefaultAppsDomain
	}
	if p.CertIssuer == nil {
		p.CertIssuer = &spec.Issuer{Name: DefaultIssuer}
	}
	if p.CertIssuer.Kind == "" {
		p.CertIssuer.Kind = "ClusterIssuer"
	}
	if p.DefaultCluster == "" {
		if len(p.Clusters) > 0 {
			p.DefaultCluster = p.Clusters[0].Name
		} else {
			p.DefaultCluster = DefaultCluster
		}
	}
	if len(p.Clusters) == 0 {
		p.Clusters = []spec.Cluster{{Name: p.DefaultCluster}}
	}
	for i := range p.Clusters {
		if p.Clusters[i].Path == "" {
			p.Clusters[i].Path = layout.DefaultClusterDir(p.Clusters[i].Name)
		}
	}
	if p.Fleet == nil {
		p.Fleet = &spec.Fleet{}
	}
	if p.Fleet.Path == "" {
		p.Fleet.Path = DefaultFleetPath
	}
	if p.Fleet.Branch == "" {
		p.Fleet.Branch = "main"
	}
	if p.Fleet.Mode == "" {
		p.Fleet.Mode = "dir"
	}
	if p.Fleet.SourceName == "" {
		p.Fleet.SourceName = DefaultSourceName
	}
	if p.Fleet.SourceNamespace == "" {
		p.Fleet.SourceNamespace = DefaultSourceNamespace
	}
	if p.Defaults == nil {
		p.Defaults = &spec.Defaults{}
	}
	if p.Policy == nil {
		p.Policy = &spec.Policy{}
	}
	if p.Build == nil {
		p.Build = &spec.BuildConfig{}
	}
	// build.platforms stays empty when unset: the builder then builds the
	// default platforms where the base image has them, and a
	// single-platform base's own platform.
}

func (l *Loader) loadApp(fsys fs.FS, file string, plat *spec.Platform, ps *Problems) *LoadedApp {
	doc := l.readDoc(fsys, file, ps)
	if doc == nil {
		return nil
	}
	if x := l.expandTemplate(fsys, doc, ps); x != nil {
		doc = x.doc
		defer x.relocate(ps, len(*ps))
	}
	if _, isMap := doc.Value.(map[string]any); !isMap {
		ps.Add(doc, nil, "an app spec must be a map with name and components; got %s", hint.TypeName(jsonType(doc.Value)))
		return nil
	}
	l.schemas.check(l.schemas.app, doc, ps)
	a := &LoadedApp{Doc: doc, File: file}
	decode(doc, &a.Spec)
	resolveApp(a, plat, ps)
	l.checks.App(a, plat, ps)
	l.readFromFiles(fsys, a, ps)
	return a
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	}
	return "object"
}

// resolveApp fills project, cluster and timeout from the spec, the folder and
// the platform.
func resolveApp(a *LoadedApp, plat *spec.Platform, ps *Problems) {
	s := &a.Spec
	switch {
	case s.Project != "":
		a.Project = s.Project
		if m := CheckNamespace(s.Project); m != "" {
			ps.Add(a.Doc, Path{"project"}, "%s", m)
		}
	case s.ProjectID != "":
		a.Project = s.ProjectID
		if name, ok := plat.ProjectIDs[s.ProjectID]; ok {
			a.Project = name
		} else if m := CheckNamespace(s.ProjectID); m != "" {
			ps.Add(a.Doc, Path{"project_id"}, "project %q %s; map it to a project name in platform.yaml's project_ids, or set project", s.ProjectID, m)
		}
	default:
		parts := strings.Split(a.File, "/")
		if len(parts) >= 4 { // apps/<project>/<app>/app.yaml
			a.Project = parts[1]
			if m := CheckNamespace(a.Project); m != "" {
				ps.Add(a.Doc, nil, "the folder %q names the project, which %s; rename it or set project", a.Project, m)
			}
		} else {
			ps.Add(a.Doc, nil, "no project: set project, or put the spec in apps/<project>/<app>/")
		}
	}
	a.Cluster = s.Cluster
	if len(plat.Environments) > 0 {
		// Each environment names its cluster (see environments).
		if s.Cluster != "" {
			ps.Add(a.Doc, Path{"cluster"}, "platform.yaml declares environments, each with its cluster: the app deploys to theirs; remove cluster (environments.<name>.enabled: false keeps the app out of one)")
		}
		a.Cluster = plat.Environments[0].Cluster
	} else if a.Cluster == "" {
		a.Cluster = plat.DefaultCluster
	} else if plat.ClusterByName(a.Cluster) == nil {
		names := make([]string, len(plat.Clusters))
		for i, c := range plat.Clusters {
			names[i] = c.Name
		}
		msg := fmt.Sprintf("unknown cluster %q; platform.yaml declares %s", a.Cluster, strings.Join(names, ", "))
		if sug := suggest(a.Cluster, names); sug != "" {
			msg += fmt.Sprintf("; did you mean %q?", sug)
		}
		ps.Add(a.Doc, Path{"cluster"}, "%s", msg)
	}
	a.Timeout = DefaultTimeout
	if def := plat.DefaultsFor(a.Project); def != nil && def.Timeout != "" {
		if d, err := time.ParseDuration(def.Timeout); err == nil && d > 0 {
			a.Timeout = d
		}
	}
	if s.Timeout != "" {
		d, err := time.ParseDuration(s.Timeout)
		switch {
		case err != nil:
			// the schema's pattern reports it
		case d <= 0:
			ps.Add(a.Doc, Path{"timeout"}, "must be longer than 0")
		default:
			a.Timeout = d
		}
	}
}

package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// Options configure a run.
type Options struct {
	// FleetDir is the fleet folder on disk.
	FleetDir string
	// Display is put before fleet paths in findings and diffs (default
	// FleetDir as given).
	Display string
	// FleetPath is the fleet folder's path inside the Git repository that
	// Flux reads: Flux Kustomization paths start with it (./<FleetPath>/...).
	// "" means the fleet is the repository's root.
	FleetPath string
	// Platform holds the policy, the clusters and the fleet's Flux source,
	// with spec.ApplyPlatformDefaults applied. nil uses the defaults.
	Platform *spec.Platform
	// Apps, when set, re-renders the specs and fails on any difference.
	Apps *Apps
	// StrictKinds makes objects of kinds verify has no API type for errors
	// rather than warnings.
	StrictKinds bool
	// FullBuild builds every Flux path with kustomize. By default a path
	// whose kustomization.yaml only lists plain files of its own folder (what
	// render writes) is assembled directly, with the result kustomize gives.
	FullBuild bool
	// Live, when set, also checks every object against a cluster.
	Live *Live
	// Registry, when set, also checks the artifacts the fleet pins
	// (components' and projects') against their registry.
	Registry *RegistryCheck
	// Logger receives progress (default: discard).
	Logger *slog.Logger
	// Workers bounds parallel work (default GOMAXPROCS).
	Workers int
}

// Live configures the checks against a cluster.
type Live struct {
	// Config reaches the cluster.
	Config *rest.Config
	// FieldManager is the field manager Flux applies with (default
	// kustomize-controller).
	FieldManager string
	// Workers bounds parallel requests (default 8).
	Workers int
}

// DefaultFieldManager is the field manager kustomize-controller applies with.
const DefaultFieldManager = "kustomize-controller"

// Report is the outcome of a run.
type Report struct {
	Findings []Finding `json:"findings"`
	Stats    Stats     `json:"stats"`
}

// Stats count what was checked.
type Stats struct {
	Files          int `json:"files"`
	Kustomizations int `json:"kustomizations"`
	// Built counts the Flux paths built; Kustomized those built by kustomize
	// itself rather than assembled directly.
	Built      int `json:"built"`
	Kustomized int `json:"kustomized"`
	Objects    int `json:"objects"`
	// Artifacts counts the artifacts (components' and projects') rebuilt
	// from their folders and compared with the digests the fleet pins; InRegistry those found
	// in their registry (with Options.Registry).
	Artifacts  int `json:"artifacts,omitempty"`
	InRegistry int `json:"in_registry,omitempty"`
	// LiveObjects counts the objects checked against the cluster.
	LiveObjects int           `json:"live_objects,omitempty"`
	Duration    time.Duration `json:"duration_ns"`
}

// Count returns how many findings have severity s.
func (r *Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Failed reports whether any finding is an error.
func (r *Report) Failed() bool { return r.Count(SeverityError) > 0 }

// run holds the state of one verification.
type run struct {
	opts     Options
	log      *slog.Logger
	workers  int
	plat     *spec.Platform
	policy   Policy
	t        *tree
	findings sink
	gitRoot  string // absolute folder Flux paths are relative to
	prefix   string // FleetPath, cleaned; "" for the root

	types map[schema.GroupVersionKind]reflect.Type // the API types by kind

	mu         sync.Mutex
	covered    map[string]bool           // fleet files some build read
	registered []registration            // every object checked, for duplicates
	replicas   []replicaCandidate        // for the production replica policy
	scalers    map[[2]string]bool        // namespace and Kind/name targets of HPAs
	nsLevels   map[string]namespaceLevel // Pod Security level each fleet Namespace enforces
	pods       []podCandidate            // pod templates for the Pod Security check
	liveObjs   []*object                 // objects for the live checks
	lists      listItems                 // the items of Lists, for positions
	kept       []keptFromPrune           // the first Flux object of each file kept from pruning
	hosts      []hostRecord              // the Ingress hosts of component folders
	refused    map[string]bool           // kustomization files whose patches break the bounds
	stats      Stats
}

type objectKey struct {
	cluster, group, kind, namespace, name string
}

// Run verifies the fleet. Findings are in the report; the error is for
// what stopped the run (unreadable fleet, unreachable cluster).
func Run(ctx context.Context, opts Options) (*Report, error) {
	start := time.Now()
	r, err := newRun(opts)
	if err != nil {
		return nil, err
	}
	r.log.Info("reading fleet", "dir", opts.FleetDir)
	if r.t, err = readTree(ctx, opts.FleetDir, r.workers*2); err != nil {
		return nil, err
	}
	r.stats.Files = len(r.t.paths)
	r.gitRoot = gitRootOf(r.t.root, r.prefix)

	// The drift check's render runs next to the other checks.
	type rendered struct {
		files map[string][]byte
		err   error
	}
	var desired chan rendered
	if opts.Apps != nil {
		r.log.Info("rendering specs for the drift check", "apps", len(opts.Apps.Repo.Apps))
		desired = make(chan rendered, 1)
		images := r.fleetImages(opts.Apps.Repo)
		go func() {
			files, err := r.desiredFleet(ctx, opts.Apps, images)
			desired <- rendered{files, err}
		}()
	}

	r.log.Info("scanning files for secrets", "files", len(r.t.paths))
	parallel(ctx, len(r.t.paths), r.workers, func(i int) {
		p := r.t.paths[i]
		r.findings.add(scanSecrets(r.display(p), r.t.files[p])...)
	})

	kss, repos := r.discover(ctx)
	r.stats.Kustomizations = len(kss)
	r.findings.add(checkDependsOn(kss, r.display)...)
	if len(repos) > 0 {
		r.log.Info("rebuilding artifacts", "ocirepositories", len(repos))
	}
	r.checkArtifacts(ctx, repos)
	r.resolveSources(kss, repos)
	r.findings.add(checkReadyPins(kss, r.display)...)
	r.checkProjectSources(kss, repos)
	var inRegistry chan error
	if opts.Registry != nil {
		inRegistry = make(chan error, 1)
		go func() { inRegistry <- r.checkRegistry(ctx, repos) }()
	}

	r.budgetKustomizations()
	r.log.Info("building Flux paths", "kustomizations", len(kss))
	parallel(ctx, len(kss), r.workers, func(i int) { r.build(kss[i]) })

	r.log.Info("checking files no Flux path applies")
	r.uncovered(ctx)
	r.hostOverlaps()
	r.checkPreviews()
	r.productionReplicas()
	r.podSecurity()

	if desired != nil {
		d := <-desired
		if d.err != nil {
			return nil, fmt.Errorf("rendering the specs: %w", d.err)
		}
		r.findings.add(driftFindings(r.t, d.files, layout.ManagedDirs(&opts.Apps.Repo.Platform), r.opts.Display)...)
		r.findings.add(r.previewDrift(ctx, opts.Apps)...)
		r.projectMismatches(repos, d.files)
	}

	if inRegistry != nil {
		if err := <-inRegistry; err != nil {
			return nil, err
		}
	}

	if opts.Live != nil && ctx.Err() == nil {
		if err := r.live(ctx); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.stats.Duration = time.Since(start)
	rep := &Report{Findings: sortFindings(r.findings.list), Stats: r.stats}
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	r.log.Info("done", "files", r.stats.Files, "objects", r.stats.Objects, "errors", rep.Count(SeverityError),
		"warnings", rep.Count(SeverityWarning), "took", r.stats.Duration.Round(time.Millisecond))
	return rep, nil
}

func newRun(opts Options) (*run, error) {
	if opts.FleetDir == "" {
		return nil, errors.New("no fleet folder")
	}
	if opts.Display == "" {
		opts.Display = opts.FleetDir
	}
	opts.Display = filepath.ToSlash(filepath.Clean(opts.Display))
	plat := opts.Platform
	if plat == nil {
		plat = &spec.Platform{}
		load.ApplyPlatformDefaults(plat)
	}
	if opts.Live != nil && opts.Live.Config == nil {
		return nil, errors.New("live checks need a cluster configuration")
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = goruntime.GOMAXPROCS(0)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	prefix := strings.Trim(path.Clean("/"+filepath.ToSlash(opts.FleetPath)), "/")
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	return &run{
		opts: opts, log: log, workers: workers, plat: plat, policy: PolicyOf(plat.Policy), prefix: prefix, types: scheme.AllKnownTypes(),
		covered: map[string]bool{}, scalers: map[[2]string]bool{}, nsLevels: map[string]namespaceLevel{}, refused: map[string]bool{},
	}, nil
}

// gitRootOf returns the folder that Flux paths are relative to: the fleet
// folder with the fleet path taken off its end, or the fleet folder itself
// when it does not end with it.
func gitRootOf(root, prefix string) string {
	if prefix == "" {
		return root
	}
	suffix := string(filepath.Separator) + filepath.FromSlash(prefix)
	if strings.HasSuffix(root, suffix) {
		return strings.TrimSuffix(root, suffix)
	}
	return root
}

func (r *run) display(p string) string { return displayPath(r.opts.Display, p) }

// parse parses a fleet file, reporting a YAML error as a finding (each
// once: duplicates are dropped when findings are sorted).
func (r *run) parse(p string) ([]doc, bool) {
	docs, err := yamlx.Parse(r.t.files[p])
	if err != nil {
		f := Finding{Check: CheckYAML, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(p), Line: 1, Message: err.Error()}}
		var ye *yamlx.Error
		if errors.As(err, &ye) {
			f.Line, f.Column, f.Message = ye.Line, ye.Col, ye.Msg
		}
		r.findings.add(f)
		return nil, false
	}
	return docs, true
}

// clusterOf returns the cluster a fleet file belongs to: the cluster whose
// entry folder holds it, or whose apps/<cluster>/ folder does.
func (r *run) clusterOf(p string) string { return layout.ClusterOf(r.plat, p) }

func (r *run) production(cluster string) bool {
	c := r.plat.ClusterByName(cluster)
	return c != nil && c.Production
}

// gvkOf returns the group, version and kind of an object node.
func gvkOf(n *node) schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(n.Get("apiVersion").Text(), n.Get("kind").Text())
}

// isKustomizeConfig reports whether a document is a kustomize
// configuration file rather than an object.
func isKustomizeConfig(n *node) bool {
	return strings.HasPrefix(n.Get("apiVersion").Text(), "kustomize.config.k8s.io/") ||
		n.Get("apiVersion") == nil && n.Get("kind").Text() == "Kustomization"
}

// mightHoldFlux reports whether a file may define a Flux Kustomization.
func mightHoldFlux(data []byte) bool {
	return bytes.Contains(data, []byte("kustomize.toolkit.fluxcd.io"))
}

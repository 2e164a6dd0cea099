package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/graph"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// fluxKS is a Flux Kustomization found in a fleet file: what the builds
// and the dependency check need of it, kept small (a fleet has thousands).
type fluxKS struct {
	name, namespace string
	file            string // slash path in the fleet
	line            int    // of its document
	pathLine        int    // of spec.path (0 when not set)
	pathCol         int
	cluster         string
	path            string // spec.path as written
	sourceKind      string
	sourceName      string
	sourceNamespace string
	sourceAt        pos // of spec.sourceRef.name
	targetNamespace string
	deps            []dependency
	// oci is the OCIRepository the Kustomization reads, when its source is
	// one the fleet defines; unresolved when it names one no file defines.
	oci        *ociRepo
	unresolved bool
	// spec is kept when it changes the build (patches, images, ...).
	spec *node
}

// dependency is one entry of spec.dependsOn.
type dependency struct {
	name, namespace string
	line, col       int
	readyExpr       string
	exprAt          pos
}

func (k *fluxKS) key() string    { return k.namespace + "/" + k.name }
func (k *fluxKS) object() string { return "Kustomization/" + k.name }

// id names the Kustomization in the fleet: its key on its cluster. Two
// clusters (two environments) hold Kustomizations of the same key.
func (k *fluxKS) id() string { return k.cluster + "\x00" + k.key() }

// discover finds every Flux Kustomization and OCIRepository in the fleet's
// YAML files.
func (r *run) discover(ctx context.Context) ([]*fluxKS, []*ociRepo) {
	var candidates []string
	for _, p := range r.t.paths {
		if data := r.t.files[p]; isYAML(p) && (mightHoldFlux(data) || mightHoldOCIRepository(data)) {
			candidates = append(candidates, p)
		}
	}
	found := make([][]*fluxKS, len(candidates))
	foundRepos := make([][]*ociRepo, len(candidates))
	foundKept := make([]keptFromPrune, len(candidates))
	parallel(ctx, len(candidates), r.workers, func(i int) {
		p := candidates[i]
		docs, ok := r.parse(p)
		if !ok {
			return
		}
		for _, d := range docs {
			switch {
			case d.Root == nil:
				continue
			case isFluxKustomization(d.Root):
				found[i] = append(found[i], r.fluxKS(p, d.Root))
			case isOCIRepository(d.Root):
				foundRepos[i] = append(foundRepos[i], r.ociRepo(p, d.Root))
			default:
				continue
			}
			if at := pruneDisabledAt(d.Root); at.line > 0 && foundKept[i].file == "" {
				foundKept[i] = keptFromPrune{file: p, object: d.Root.Get("kind").Text() + "/" + d.Root.Get("metadata").Get("name").Text(), at: at}
			}
		}
	})
	for _, k := range foundKept {
		if k.file != "" {
			r.kept = append(r.kept, k)
		}
	}
	var all []*fluxKS
	for _, f := range found {
		all = append(all, f...)
	}
	var repos []*ociRepo
	for _, f := range foundRepos {
		repos = append(repos, f...)
	}
	slices.SortStableFunc(all, func(a, b *fluxKS) int {
		return cmp.Or(strings.Compare(a.id(), b.id()), strings.Compare(a.file, b.file), cmp.Compare(a.line, b.line))
	})
	// A Kustomization defined twice is built once; the duplicate is
	// reported with the other objects.
	out := all[:0]
	for i, k := range all {
		if i == 0 || all[i-1].id() != k.id() {
			out = append(out, k)
		}
	}
	return out, sortRepos(repos)
}

func isFluxKustomization(n *node) bool {
	return strings.HasPrefix(n.Get("apiVersion").Text(), "kustomize.toolkit.fluxcd.io/") && n.Get("kind").Text() == "Kustomization"
}

func (r *run) fluxKS(file string, n *node) *fluxKS {
	md, sp := n.Get("metadata"), n.Get("spec")
	k := &fluxKS{
		name:      md.Get("name").Text(),
		namespace: md.Get("namespace").Text(),
		file:      file,
		line:      int(n.Line),
		cluster:   r.clusterOf(file),
		path:      sp.Get("path").Text(),
	}
	if k.namespace == "" {
		k.namespace = r.plat.Fleet.SourceNamespace
	}
	if p := sp.Get("path"); p != nil {
		k.pathLine, k.pathCol = int(p.Line), int(p.Col)
	}
	if deps := sp.Get("dependsOn"); deps != nil && deps.Kind == yamlx.SeqNode {
		for _, d := range deps.Kids {
			dep := dependency{name: d.Get("name").Text(), namespace: d.Get("namespace").Text(), line: int(d.Line), col: int(d.Col)}
			if at := d.Get("name"); at != nil {
				dep.line, dep.col = int(at.Line), int(at.Col)
			}
			if e := d.Get("readyExpr"); e != nil {
				dep.readyExpr, dep.exprAt = e.Text(), pos{line: int(e.Line), col: int(e.Col)}
			}
			if dep.namespace == "" {
				dep.namespace = k.namespace
			}
			k.deps = append(k.deps, dep)
		}
	}
	if changesBuild(sp) {
		k.spec = sp
	}
	ref := sp.Get("sourceRef")
	k.sourceKind, k.sourceName, k.sourceNamespace = ref.Get("kind").Text(), ref.Get("name").Text(), ref.Get("namespace").Text()
	if k.sourceNamespace == "" {
		k.sourceNamespace = k.namespace
	}
	k.sourceAt = at(n, "spec.sourceRef.name")
	k.targetNamespace = sp.Get("targetNamespace").Text()
	return k
}

// checkDependsOn checks that every dependsOn names a Kustomization of the
// fleet and that the dependencies have no cycle.
func checkDependsOn(kss []*fluxKS, display func(string) string) []Finding {
	var out []Finding
	byKey := make(map[string]*fluxKS, len(kss))
	g := graph.New()
	for _, k := range kss {
		byKey[k.id()] = k
		g.AddNode(k.id())
	}
	for _, k := range kss {
		for i, d := range k.deps {
			if d.name == "" {
				continue // a missing name is an API finding
			}
			target := d.namespace + "/" + d.name
			if _, ok := byKey[k.cluster+"\x00"+target]; !ok {
				out = append(out, Finding{
					Check: CheckDeps, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: display(k.file), Line: d.line, Column: d.col,
						Object: k.object(), Path: fmt.Sprintf("spec.dependsOn[%d].name", i),
						Message: fmt.Sprintf("depends on Kustomization %s, which no fleet file defines", target)},
				})
				continue
			}
			g.AddEdge(k.id(), k.cluster+"\x00"+target)
		}
	}
	if _, err := g.Order(); err != nil {
		var ce *graph.CycleError
		if errors.As(err, &ce) && len(ce.Cycle) > 0 {
			k := byKey[ce.Cycle[0]]
			names := make([]string, len(ce.Cycle))
			for i, id := range ce.Cycle {
				_, names[i], _ = strings.Cut(id, "\x00")
			}
			out = append(out, Finding{
				Check: CheckDeps, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: display(k.file), Line: k.line,
					Object: k.object(), Path: "spec.dependsOn",
					Message: "dependency cycle: " + strings.Join(names, " -> ")},
			})
		}
	}
	return out
}

// checkReadyPins checks that a dependsOn whose readyExpr waits for the
// dependency to apply an artifact names the digest the dependency's
// OCIRepository pins: any other never becomes its last applied revision,
// and Flux would hold the dependent back for good. Run after
// resolveSources.
func checkReadyPins(kss []*fluxKS, display func(string) string) []Finding {
	byKey := make(map[string]*fluxKS, len(kss))
	for _, k := range kss {
		byKey[k.id()] = k
	}
	var out []Finding
	for _, k := range kss {
		for i, d := range k.deps {
			pin, ok := layout.ReadyExprDigest(d.readyExpr)
			dep := byKey[k.cluster+"\x00"+d.namespace+"/"+d.name]
			if !ok || dep == nil || dep.oci == nil || dep.oci.digest == "" || dep.oci.digest == pin {
				continue
			}
			out = append(out, Finding{
				Check: CheckDeps, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: display(k.file), Line: d.exprAt.line, Column: d.exprAt.col,
					Object: k.object(), Path: fmt.Sprintf("spec.dependsOn[%d].readyExpr", i),
					Message: fmt.Sprintf("waits for Kustomization %s to apply artifact %s, but its OCIRepository %s pins %s: Flux would hold this Kustomization back for good; re-render (render names the artifact the dependency's OCIRepository pins)",
						d.name, pin, dep.oci.name, dep.oci.digest)},
			})
		}
	}
	return out
}

// fleetRel maps a Flux path (relative to the Git root) onto the fleet
// folder: ./fleet/apps/x becomes apps/x when the fleet path is fleet.
func (r *run) fleetRel(p string) (string, bool) {
	// Flux joins the path to the source root securely: ".." cannot climb
	// above it, as path.Clean of a rooted path does.
	clean := strings.TrimPrefix(path.Clean("/"+p), "/")
	switch {
	case r.prefix == "":
		return clean, true
	case clean == r.prefix:
		return "", true
	case strings.HasPrefix(clean, r.prefix+"/"):
		return strings.TrimPrefix(clean, r.prefix+"/"), true
	}
	return "", false
}

// ksDir returns the fleet folder a Kustomization builds ("" when unknown).
func (r *run) ksDir(k *fluxKS) string {
	if k.oci != nil {
		if !k.oci.dirOK {
			return ""
		}
		return k.ociDir()
	}
	dir, _ := r.fleetRel(k.path)
	return dir
}

package generate

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/manifest"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Environments (platform.yaml environments): every copy of an app in an
// environment that is promoted, or promoted from, gets a release file
// (layout.ReleaseFile) beside its component folders, which records what
// the copy was rendered from. An
// environment with promote_from changes only by promotion: a render keeps
// its apps' files as the fleet has them, byte for byte, by the list its
// release file holds, unless Options.Promote asks for the app.

// Release is what an app's copy in an environment was rendered from: the
// content of its release file.
type Release struct {
	// Environment the copy runs in.
	Environment string `json:"environment"`
	// PromotedFrom is the environment the release was promoted from ("" for
	// a copy a render of the apps repository wrote).
	PromotedFrom string `json:"promoted_from,omitempty"`
	// AppsCommit is the apps-repository commit a promotion rendered the
	// copy at (its own folder at SpecRevision): what verify renders it
	// from again.
	AppsCommit string `json:"apps_commit,omitempty"`
	// SpecRevision is the commit of the app's spec rendered.
	SpecRevision string `json:"spec_revision,omitempty"`
	// Images are the images the workloads run, by component, as rendered
	// (pinned by digest when render pins).
	Images map[string]string `json:"images,omitempty"`
	// Files are the fleet files of the copy, sorted, the release file
	// aside.
	Files []string `json:"files"`
}

// ParseRelease reads a release file.
func ParseRelease(data []byte) (*Release, error) {
	var r Release
	if err := yaml.UnmarshalStrict(data, &r); err != nil {
		return nil, err
	}
	if r.Environment == "" {
		return nil, errors.New("no environment")
	}
	for _, f := range r.Files {
		if f == "" || path.IsAbs(f) || path.Clean(f) != f || strings.HasPrefix(f, "../") || f == ".." || path.Base(f) == layout.ReleaseFileName {
			return nil, fmt.Errorf("files: %q is not a fleet file of the app", f)
		}
	}
	return &r, nil
}

// Promotion says how a copy of an app in an environment with
// promote_from is rendered when Options.Promote asks for it.
type Promotion struct {
	From       string // the environment promoted from
	AppsCommit string // the apps-repository commit rendered at
}

// recordsReleases reports whether the copies of apps in environment env
// get a release file: in an environment that promotes, or is promoted,
// from another.
func (r *renderer) recordsReleases(env string) bool {
	if env == "" {
		return false
	}
	for _, e := range r.opts.Platform.Environments {
		if e.PromoteFrom != "" && (e.Name == env || e.PromoteFrom == env) {
			return true
		}
	}
	return false
}

// kept reports whether the render keeps a's files as the fleet has them.
func (r *renderer) kept(a *load.LoadedApp) bool {
	if a.Environment == "" {
		return false
	}
	e := r.opts.Platform.EnvironmentByName(a.Environment)
	if e == nil || e.Rendered() {
		return false
	}
	if r.opts.Promote != nil {
		if _, ok := r.opts.Promote(a); ok {
			return false
		}
	}
	return true
}

// keep returns the files of a's copy in its environment as the fleet has
// them: its release file and the files it lists. None when the fleet has
// no release of the app there: it was never promoted.
func (r *renderer) keep(a *load.LoadedApp) ([]File, error) {
	if r.opts.Previous == nil {
		return nil, nil
	}
	rf := layout.ReleaseFile(a.Cluster, a.Project, a.Spec.Name)
	data, ok := r.opts.Previous(rf)
	if !ok {
		return nil, nil
	}
	rel, err := ParseRelease(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rf, err)
	}
	if rel.Environment != a.Environment {
		return nil, fmt.Errorf("%s: the release is of environment %q, not %q", rf, rel.Environment, a.Environment)
	}
	key := a.Key()
	files := []File{{Path: rf, Data: data, App: key}}
	for _, p := range rel.Files {
		if layout.AppOf(p) != key && !r.isAppFluxFile(a, p) {
			return nil, fmt.Errorf("%s: %s is not a file of %s", rf, p, key)
		}
		b, ok := r.opts.Previous(p)
		if !ok {
			return nil, fmt.Errorf("%s lists %s, which the fleet does not have: the %s copy of %s changes only by promotion; promote it again (render promote %s --to %s)",
				rf, p, a.Environment, a.Spec.Name, a.Spec.Name, a.Environment)
		}
		files = append(files, File{Path: p, Data: b, App: key})
	}
	return files, nil
}

// isAppFluxFile reports whether p is a file the app's Flux objects may be
// in: its cluster folder's file or its project's Flux folder's.
func (r *renderer) isAppFluxFile(a *load.LoadedApp, p string) bool {
	return p == layout.AppFile(r.opts.Platform, a.Cluster, a.Project, a.Spec.Name) ||
		p == layout.AppFluxFile(a.Cluster, a.Project, a.Spec.Name)
}

// release returns the release file of a's copy in its environment, for
// its generated files.
func (r *renderer) release(a *load.LoadedApp, files []File) (File, error) {
	rel := Release{Environment: a.Environment, Images: map[string]string{}}
	if r.opts.SpecRevision != nil {
		rel.SpecRevision = r.opts.SpecRevision(a)
	}
	if r.opts.Promote != nil {
		if p, ok := r.opts.Promote(a); ok {
			rel.PromotedFrom, rel.AppsCommit = p.From, p.AppsCommit
		}
	}
	for _, c := range a.Spec.Components {
		if c.WorkloadSpec == nil {
			continue
		}
		img, ok := r.opts.Images[load.NodeID(a, c.Name)]
		if !ok {
			img = c.WorkloadSpec.Image
		}
		if img != "" {
			rel.Images[c.Name] = img
		}
	}
	if len(rel.Images) == 0 {
		rel.Images = nil
	}
	for _, f := range files {
		rel.Files = append(rel.Files, f.Path)
	}
	slices.Sort(rel.Files)
	var b bytes.Buffer
	b.WriteString(manifest.Header)
	b.WriteString("# The release of this app in environment " + a.Environment + ": what its files were rendered from (docs/fleet.md).\n")
	if err := manifest.Append(&b, rel); err != nil {
		return File{}, err
	}
	return File{Path: layout.ReleaseFile(a.Cluster, a.Project, a.Spec.Name), Data: b.Bytes(), App: a.Key()}, nil
}

// ReleasesIn returns the releases of the fleet files, by app key
// (cluster/project/name): those of the apps in environments.
func ReleasesIn(files map[string][]byte) (map[string]*Release, error) {
	out := map[string]*Release{}
	var errs []error
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if path.Base(p) != layout.ReleaseFileName || layout.InComponentDir(p) {
			continue
		}
		l := layout.Parse(p)
		if l.Preview != 0 || l.App == "" || layout.ReleaseFile(l.Cluster, l.Project, l.App) != p {
			continue
		}
		key := l.AppKey()
		rel, err := ParseRelease(files[p])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
			continue
		}
		out[key] = rel
	}
	return out, errors.Join(errs...)
}

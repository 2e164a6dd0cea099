package generate

import (
	"fmt"
	"path"
	"slices"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// componentFiles appends to files those of a component's folder dir: one
// per object, and the kustomization.yaml that lists them with the
// component's patches.
func (r *renderer) componentFiles(files []File, a *load.LoadedApp, c *spec.Component, dir string) ([]File, error) {
	objs, err := r.component(a, c)
	if err != nil {
		return nil, fmt.Errorf("component %s: %w", c.Name, err)
	}
	key := a.Key()
	var names []string
	for _, o := range objs {
		data, err := encode(o.obj)
		if err != nil {
			return nil, err
		}
		n := layout.ObjectFile(o.kind, o.name)
		names = append(names, n)
		files = append(files, File{Path: path.Join(dir, n), Data: data, App: key})
	}
	slices.Sort(names)
	kf := kustomizeFile(names)
	if c.WorkloadSpec != nil && len(c.WorkloadSpec.Patches) > 0 {
		if kf["patches"], err = patches(c.WorkloadSpec.Patches); err != nil {
			return nil, fmt.Errorf("component %s: %w", c.Name, err)
		}
	}
	kz, err := encode(kf)
	if err != nil {
		return nil, err
	}
	return append(files, File{Path: path.Join(dir, layout.Kustomization), Data: kz, App: key}), nil
}

// Components renders single components' folders, as Render writes them:
// what render validate builds with kustomize to check a component's
// patches.
type Components struct{ r *renderer }

// NewComponents prepares to render components of a valid repository
// (loaded without errors) with opts (images as written when opts.Images
// is nil).
func NewComponents(repo *load.Repo, opts Options) *Components {
	if opts.Platform == nil {
		opts.Platform = &repo.Platform
	}
	if opts.FleetPath == "" {
		opts.FleetPath = opts.Platform.Fleet.Path
	}
	r := &renderer{opts: opts, repo: repo, apps: make(map[string]*load.LoadedApp, len(repo.Apps)), compOrder: map[string][]string{}}
	for _, x := range repo.Apps {
		r.apps[x.Key()] = x
	}
	return &Components{r}
}

// Folder returns the folder of one component of app a and its files.
func (cs *Components) Folder(a *load.LoadedApp, c *spec.Component) (string, []File, error) {
	dir := layout.ComponentDir(a.Cluster, a.Project, a.Spec.Name, c.Name)
	files, err := cs.r.componentFiles(nil, a, c, dir)
	return dir, files, err
}

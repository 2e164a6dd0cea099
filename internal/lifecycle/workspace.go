package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/hint"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spec/validate"
	"github.com/fleetwright/fleetwright/internal/specedit"
	"github.com/fleetwright/fleetwright/internal/template"
)

// workspace is an apps repository loaded for editing.
type workspace struct {
	root   string // as shown to the user
	abs    string
	loader *load.Loader
	files  map[string][]byte // platform, spec and template files by slash path
	repo   *load.Repo
	ps     load.Problems
}

func openWorkspace(dir string) (*workspace, error) {
	root, err := cli.FindRoot(dir)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	files, err := load.ReadFiles(os.DirFS(abs))
	if err != nil {
		return nil, err
	}
	loader, err := validate.NewLoader(exports.Catalog{}, root)
	if err != nil {
		return nil, err
	}
	w := &workspace{root: root, abs: abs, loader: loader, files: files}
	w.repo, w.ps = loader.LoadFiles(files)
	return w, nil
}

// display is a repository path as problems show it.
func (w *workspace) display(p string) string {
	if w.root == "" || w.root == "." {
		return p
	}
	return path.Join(filepath.ToSlash(w.root), p)
}

// exists reports whether the slash path p is a file of the work tree.
func (w *workspace) exists(p string) bool {
	_, err := os.Stat(filepath.Join(w.abs, filepath.FromSlash(p)))
	return err == nil
}

// openApp opens the apps repository and finds the app o.App names.
func openApp(o Options) (*workspace, *load.LoadedApp, error) {
	w, err := openWorkspace(o.repo())
	if err != nil {
		return nil, nil, err
	}
	cluster := ""
	if o.Environment != "" {
		if cluster, err = environmentCluster(&w.repo.Platform, o.Environment); err != nil {
			return nil, nil, err
		}
	}
	a, err := w.findApp(o.App, cluster)
	if err != nil {
		return nil, nil, err
	}
	return w, a, nil
}

// findApp resolves APP, PROJECT/APP or CLUSTER/PROJECT/APP among the
// apps of cluster (every cluster's when it is empty).
func (w *workspace) findApp(addr, cluster string) (*load.LoadedApp, error) {
	match, named, err := appMatcher(addr)
	if err != nil {
		return nil, err
	}
	if named.Cluster != "" && cluster != "" && named.Cluster != cluster {
		return nil, refuse("%q names cluster %s, but the environment's cluster is %s", addr, named.Cluster, cluster)
	}
	var found []*load.LoadedApp
	for _, a := range w.repo.Apps {
		if (cluster == "" || a.Cluster == cluster) && match(a) {
			found = append(found, a)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		msg := fmt.Sprintf("no app %q in %s", addr, w.root)
		if cluster != "" {
			msg = fmt.Sprintf("no app %q in cluster %s in %s", addr, cluster, w.root)
		}
		if sug := closest(named.Name, w.repo.Apps); sug != "" {
			msg += fmt.Sprintf("; did you mean %q?", sug)
		} else if len(w.repo.Apps) == 0 {
			msg += " (it has no apps)"
		}
		return nil, refused(errors.New(msg))
	}
	keys := make([]string, len(found))
	for i, a := range found {
		keys[i] = a.Key()
	}
	return nil, fmt.Errorf("%q names %d apps (%s); write PROJECT/APP or CLUSTER/PROJECT/APP", addr, len(found), strings.Join(keys, ", "))
}

// appMatcher reads APP, PROJECT/APP (layout.ParseRef) or
// CLUSTER/PROJECT/APP (layout.ParseKey): which apps match it, and as much
// of the app as it names.
func appMatcher(addr string) (match func(*load.LoadedApp) bool, named layout.App, err error) {
	switch strings.Count(addr, "/") {
	case 0:
		if addr != "" {
			named.Name = addr
			return func(a *load.LoadedApp) bool { return a.Spec.Name == addr }, named, nil
		}
	case 1:
		if named.AppRef, err = layout.ParseRef(addr); err == nil {
			return func(a *load.LoadedApp) bool { return a.App().AppRef == named.AppRef }, named, nil
		}
	case 2:
		if named, err = layout.ParseKey(addr); err == nil {
			return func(a *load.LoadedApp) bool { return a.App() == named }, named, nil
		}
	}
	return nil, layout.App{}, fmt.Errorf("%q is not an app: write APP, PROJECT/APP or CLUSTER/PROJECT/APP", addr)
}

func closest(name string, apps []*load.LoadedApp) string {
	best, bestD := "", len(name)/2+1
	for _, a := range apps {
		if d := hint.Distance(name, a.Spec.Name); d < bestD {
			best, bestD = a.Ref(), d
		}
	}
	return best
}

// editDoc parses an app's spec file for editing.
func (w *workspace) editDoc(a *load.LoadedApp) (*specedit.Doc, error) {
	data, ok := w.files[a.File]
	if !ok {
		return nil, fmt.Errorf("%s: not read", a.File)
	}
	d, err := specedit.Parse(a.File, data)
	if err != nil {
		return nil, refused(err)
	}
	return d, nil
}

// template parses the template called name from the workspace's files.
func (w *workspace) template(name string) (*template.Template, error) {
	for _, n := range template.FileNames {
		p := path.Join(load.TemplateDir(name), n)
		if b, ok := w.files[p]; ok {
			t, err := template.Parse(w.display(p), b)
			if err != nil {
				return nil, refused(err)
			}
			return t, nil
		}
	}
	return nil, refuse("no template %q in %s", name, w.display(template.Dir))
}

// isLoaded reports whether the spec loader reads the file at p.
func isLoaded(p string) bool {
	base := path.Base(p)
	switch {
	case strings.HasPrefix(p, "apps/"):
		return slices.Contains(load.SpecFileNames, base)
	case strings.HasPrefix(p, template.Dir+"/"):
		return slices.Contains(template.FileNames, base) && strings.Count(p, "/") == 2
	}
	return slices.Contains(load.PlatformFileNames, p)
}

func under(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }

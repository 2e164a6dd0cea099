package render

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/build"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/registry"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// An ImageSource resolves the image each workload of a valid repository
// runs in the fleet.
type ImageSource interface {
	Images(ctx context.Context, in ImageInput) (Images, error)
}

// ImageInput is what an ImageSource works on.
type ImageInput struct {
	Repo     *load.Repo
	Source   Source
	Progress Progress     // never nil when Render calls
	Logger   *slog.Logger // never nil when Render calls
}

// Images are an ImageSource's answer.
type Images struct {
	// ByNode maps a workload's graph node (spec.NodeID) to its image when
	// that differs from the spec's (built, or pinned by digest).
	ByNode map[string]string
	// Warnings are for the user, one line each, without "warning: ".
	Warnings []string
}

// An ImageError is an image that could not be built, pushed or pinned: the
// specs are valid, the images are not ready.
type ImageError struct{ Err error }

func (e *ImageError) Error() string { return e.Err.Error() }
func (e *ImageError) Unwrap() error { return e.Err }

// workloads sorts the repository's workloads into those render builds (in
// order) and the images as written, with the nodes that run each.
type workloads struct {
	built   []builtWorkload
	byImage map[string][]string
}

type builtWorkload struct {
	node string
	app  *load.LoadedApp
	comp string
}

func collect(repo *load.Repo) workloads {
	ws := workloads{byImage: map[string][]string{}}
	for _, a := range repo.Apps {
		for _, c := range a.Spec.Components {
			w := c.WorkloadSpec
			if w == nil {
				continue
			}
			node := load.NodeID(a, c.Name)
			if built(w) {
				ws.built = append(ws.built, builtWorkload{node, a, c.Name})
			} else {
				ws.byImage[w.Image] = append(ws.byImage[w.Image], node)
			}
		}
	}
	return ws
}

func built(w *spec.WorkloadSpec) bool {
	return w.BuildMode == spec.BuildModeDockerfile || w.BuildMode == spec.BuildModeBuildpack
}

// requests are the builds of ws.built with their files below root, and the
// paths (contexts, Dockerfiles and their ignore files) that hold their
// inputs.
func (ws workloads) requests(plat *spec.Platform, root string) ([]build.Request, []string) {
	reqs := make([]build.Request, len(ws.built))
	var inputs []string
	for i, b := range ws.built {
		req := buildRequest(b.app, b.comp, plat, root)
		df := path.Join(req.Context, req.Dockerfile)
		if req.Dockerfile == "" {
			df = path.Join(req.Context, "Dockerfile")
		}
		reqs[i] = req
		inputs = append(inputs, req.Context, df, df+".dockerignore")
	}
	return reqs, inputs
}

// unpinned warns about the images as written that carry no digest, naming
// at most maxUnpinnedWarnings of them.
func (ws workloads) unpinned(why string) []string {
	var refs []string
	for img := range ws.byImage {
		if !strings.Contains(img, "@sha256:") {
			refs = append(refs, img)
		}
	}
	slices.Sort(refs)
	var out []string
	for i, img := range refs {
		if i == maxUnpinnedWarnings && len(refs) > i+1 {
			out = append(out, fmt.Sprintf("%d more image(s) are not pinned by digest (%s)", len(refs)-i, why))
			break
		}
		out = append(out, fmt.Sprintf("image %s is not pinned by digest (%s)", img, why))
	}
	return out
}

// maxUnpinnedWarnings bounds the images named one by one: a repository of
// thousands of apps gets a count for the rest, not thousands of lines.
const maxUnpinnedWarnings = 10

// BuildAndPin builds the images of dockerfile and buildpack workloads,
// pushes them under content tags (skipping those the registry has) and,
// unless platform.yaml turns pinning off, pins every other image by digest.
type BuildAndPin struct {
	// Registry pushes, checks and pins images. Required.
	Registry *registry.Client
	// LookPath finds the pack program for buildpack builds.
	LookPath func(string) (string, error)
	// SourceDateEpoch, seconds since 1970 as $SOURCE_DATE_EPOCH gives
	// them, stamps built images ("": the epoch).
	SourceDateEpoch string
	// Secrets are RUN --mount=type=secret sources given on the command
	// line; they win over platform.yaml's build.secrets of the same id.
	Secrets map[string]build.SecretSource
	// AppsRoot is the apps repository's folder, against which relative
	// secret files are read.
	AppsRoot string
	// LookupEnv reads secrets named by environment variable; nil means
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// localOptions is the RUN configuration of platform.yaml's build section
// and of b.
func (b BuildAndPin) localOptions(plat *spec.Platform, output *lineWriter) (build.LocalOptions, error) {
	opts := build.LocalOptions{Network: plat.Build.Network, Output: output, LookupEnv: b.LookupEnv, Secrets: map[string]build.SecretSource{}}
	if t := plat.Build.Timeout; t != "" {
		d, err := time.ParseDuration(t)
		if err != nil {
			return opts, fmt.Errorf("platform.yaml: build.timeout: %w", err)
		}
		opts.Timeout = d
	}
	opts.SecretProjects = map[string][]string{}
	for _, s := range plat.Build.Secrets {
		src := build.SecretSource{Env: s.Env, File: s.File}
		if src.File != "" && !filepath.IsAbs(src.File) && b.AppsRoot != "" {
			src.File = filepath.Join(b.AppsRoot, filepath.FromSlash(src.File))
		}
		opts.Secrets[s.ID] = src
		opts.SecretProjects[s.ID] = append([]string{}, s.Projects...)
	}
	// A secret given on the command line wins, for every project.
	for id := range b.Secrets {
		delete(opts.SecretProjects, id)
	}
	maps.Copy(opts.Secrets, b.Secrets)
	limits, err := buildLimits(plat.Build.Limits)
	if err != nil {
		return opts, err
	}
	opts.Limits = limits
	return opts, nil
}

// Images builds and pins.
func (b BuildAndPin) Images(ctx context.Context, in ImageInput) (Images, error) {
	plat := &in.Repo.Platform
	ws := collect(in.Repo)
	out := Images{ByNode: map[string]string{}}
	if len(ws.built) > 0 {
		if err := b.build(ctx, in, ws, out.ByNode); err != nil {
			return Images{}, err
		}
	}
	if !plat.Pinning() {
		out.Warnings = ws.unpinned("pinning is off in platform.yaml")
		return out, nil
	}
	refs := slices.Sorted(func(yield func(string) bool) {
		for img := range ws.byImage {
			if !yield(img) {
				return
			}
		}
	})
	in.Progress.Stage(fmt.Sprintf("pinning %d image(s) by digest", len(refs)))
	pinned, err := b.Registry.PinAll(ctx, refs)
	if err != nil {
		return Images{}, &ImageError{fmt.Errorf("pinning images by digest (render --offline keeps tags): %w", err)}
	}
	for i, img := range refs {
		for _, node := range ws.byImage[img] {
			out.ByNode[node] = pinned[i]
		}
	}
	return out, nil
}

// build runs the builds in the graph's order, a level at a time.
func (b BuildAndPin) build(ctx context.Context, in ImageInput, ws workloads, images map[string]string) error {
	plat := &in.Repo.Platform
	if plat.Registry == "" {
		r := ws.built[0]
		return &ImageError{fmt.Errorf("%s: component %s builds its image, but platform.yaml sets no registry to push it to", r.app.Doc.File, r.comp)}
	}
	_, inputs := ws.requests(plat, "")
	root, done, err := in.Source.Materialize(ctx, inputs)
	if err != nil {
		return err
	}
	defer done()
	output := &lineWriter{fn: in.Progress.Print}
	local, err := b.localOptions(plat, output)
	if err != nil {
		return err
	}
	cfg := build.Config{Registry: b.Registry, Local: local, Pack: build.PackOptions{LookPath: b.LookPath, Output: output}, Logger: in.Logger}
	if ext := plat.Build.External; ext != nil {
		cfg.External = &build.ExternalOptions{Command: ext.Command, Output: output}
	}
	builder, err := build.New(cfg)
	if err != nil {
		return err
	}
	epoch := int64(0)
	if s := b.SourceDateEpoch; s != "" {
		if epoch, err = strconv.ParseInt(s, 10, 64); err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds", s)
		}
	}
	reqs, _ := ws.requests(plat, root)
	jobs := map[string]build.Job{}
	for i, w := range ws.built {
		req := reqs[i]
		req.Repo = builtRepo(plat, req.Name)
		req.SourceDateEpoch = epoch
		jobs[w.node] = build.Job{Name: w.node, Request: req}
	}
	levels, err := buildLevels(in.Repo, jobs)
	if err != nil {
		return err
	}
	results, err := build.RunLevels(ctx, builder, levels, build.RunOptions{Progress: buildEvents(in.Progress)})
	output.flush()
	if err != nil {
		var unsupported *build.UnsupportedError
		if errors.As(err, &unsupported) || errors.Is(err, build.ErrBuildpackUnsupported) {
			return &ImageError{err}
		}
		return &ImageError{fmt.Errorf("building images: %w", err)}
	}
	for node, res := range results {
		images[node] = res.Ref
	}
	return nil
}

// buildLevels orders jobs as the graph orders their nodes, a level at a
// time, leaving out levels without builds.
func buildLevels(repo *load.Repo, jobs map[string]build.Job) ([][]build.Job, error) {
	all, err := repo.Graph.Levels()
	if err != nil {
		return nil, err
	}
	var levels [][]build.Job
	for _, lvl := range all {
		var l []build.Job
		for _, id := range lvl {
			if j, ok := jobs[id]; ok {
				l = append(l, j)
			}
		}
		if len(l) > 0 {
			levels = append(levels, l)
		}
	}
	return levels, nil
}

// ContentTags names the image of every workload render builds as render
// tags it, `<registry>/<project>/<app>-<component>:<content tag>`, without
// building: the tag is build.ContentTag over the build's inputs as the
// Source holds them. Other images stay as written. The digest is known only
// once render builds the image.
type ContentTags struct {
	// Unpinned, when set, says why images are not pinned by digest, in a
	// warning per image as written (and one per image named by its tag).
	Unpinned string
}

// Images computes the tags.
func (c ContentTags) Images(ctx context.Context, in ImageInput) (Images, error) {
	plat := &in.Repo.Platform
	ws := collect(in.Repo)
	out := Images{ByNode: map[string]string{}}
	if c.Unpinned != "" {
		out.Warnings = ws.unpinned(c.Unpinned)
	}
	if len(ws.built) == 0 {
		return out, nil
	}
	_, inputs := ws.requests(plat, "")
	root, done, err := in.Source.Materialize(ctx, inputs)
	if err != nil {
		return Images{}, err
	}
	defer done()
	reqs, _ := ws.requests(plat, root)
	var named []string
	for i, w := range ws.built {
		tag, err := build.ContentTag(reqs[i])
		if err != nil {
			return Images{}, fmt.Errorf("%s: component %s: %w", componentPos(w.app, w.comp), w.comp, err)
		}
		img := builtRepo(plat, reqs[i].Name) + ":" + tag
		out.ByNode[w.node] = img
		named = append(named, img)
	}
	if c.Unpinned != "" {
		out.Warnings = append(out.Warnings, notBuilt(named, c.Unpinned))
	}
	return out, nil
}

// notBuilt is the one warning about the images named by their content tag
// without being built: the image itself when there is one, else a count
// and the first maxUnpinnedWarnings.
func notBuilt(images []string, why string) string {
	if len(images) == 1 {
		return fmt.Sprintf("image %s is named by its content tag, not built (%s)", images[0], why)
	}
	list := strings.Join(images[:min(len(images), maxUnpinnedWarnings)], ", ")
	if len(images) > maxUnpinnedWarnings {
		list += fmt.Sprintf(" and %d more", len(images)-maxUnpinnedWarnings)
	}
	return fmt.Sprintf("%d images are named by their content tags, not built (%s): %s", len(images), why, list)
}

// componentPos is file:line:col of component comp's build settings in its
// app spec (or of the component when it has none).
func componentPos(a *load.LoadedApp, comp string) string {
	for i, c := range a.Spec.Components {
		if c.Name == comp && a.Doc != nil {
			p := a.Doc.Pos(load.Path{"components", i, "workload_spec", "build"})
			return fmt.Sprintf("%s:%d:%d", a.File, p.Line, p.Col)
		}
	}
	return a.File
}

// builtRepo is the repository render pushes the image of the build named
// name to: below platform.yaml's registry.
func builtRepo(plat *spec.Platform, name string) string {
	if plat.Registry == "" {
		return name
	}
	return strings.TrimSuffix(plat.Registry, "/") + "/" + name
}

// buildRequest is the build of component comp of app a as render runs it,
// with the apps repository's files under root: its name, context,
// Dockerfile, arguments, target, platforms and mode.
func buildRequest(a *load.LoadedApp, comp string, plat *spec.Platform, root string) build.Request {
	w := a.Component(comp).WorkloadSpec
	req := build.Request{
		Name:      a.Project + "/" + layout.ObjectName(a.Spec.Name, comp),
		Project:   a.Project,
		Root:      root,
		Platforms: plat.Build.Platforms,
		Mode:      build.ModeDockerfile,
	}
	ctxDir := "."
	if w.Build != nil {
		if w.Build.Context != "" {
			ctxDir = w.Build.Context
		}
		req.Dockerfile, req.BuildArgs, req.Target = w.Build.Dockerfile, w.Build.Args, w.Build.Target
	}
	if w.BuildMode == spec.BuildModeBuildpack {
		req.Mode = build.ModeBuildpack
	}
	req.Context = path.Join(path.Dir(a.File), ctxDir)
	return req
}

// FleetImages takes each workload's image from the Deployment (or
// StatefulSet, Job, CronJob) an existing fleet holds for it, when that image is the spec's image pinned by digest
// or, for a built image, an image of the repository render pushes to; the
// others stay as written. It asks no registry: verify re-renders with it.
type FleetImages struct {
	// Image returns the image of the container named container in the
	// fleet file at the slash path file, or "".
	Image func(file, container string) string
	// Find returns the slash path of the fleet file in the folder dir
	// whose name starts with prefix, or "": a job's Job file, whose name
	// carries a hash. Nil finds none.
	Find func(dir, prefix string) string
}

// Images reads the fleet.
func (f FleetImages) Images(_ context.Context, in ImageInput) (Images, error) {
	repo := in.Repo
	images := map[string]string{}
	for _, a := range repo.Apps {
		for _, c := range a.Spec.Components {
			w := c.WorkloadSpec
			if w == nil {
				continue
			}
			name := layout.ObjectName(a.Spec.Name, c.Name)
			dir := layout.ComponentDir(a.Cluster, a.Project, a.Spec.Name, c.Name)
			kind, obj := generate.WorkloadObject(a, &c)
			file := path.Join(dir, layout.ObjectFile(kind, obj))
			if kind == "Job" {
				if file = ""; f.Find != nil {
					file = f.Find(dir, strings.TrimSuffix(layout.ObjectFile(kind, obj), ".yaml"))
				}
			}
			if file == "" {
				continue
			}
			got := f.Image(file, c.Name)
			if got == "" {
				continue
			}
			want := w.Image
			if built(w) {
				want = builtRepo(&repo.Platform, a.Project+"/"+name)
			}
			if imageMatches(want, got, built(w)) {
				images[load.NodeID(a, c.Name)] = got
			}
		}
	}
	return Images{ByNode: images}, nil
}

// imageMatches reports whether got is want pinned by digest (or, for a
// built image, any tag or digest of want's repository).
func imageMatches(want, got string, built bool) bool {
	if want == "" {
		return false
	}
	repo, digest, _ := strings.Cut(got, "@")
	if built {
		name, _ := splitTag(repo)
		return name == want
	}
	if digest == "" {
		return false
	}
	wantName, wantTag := splitTag(want)
	gotName, gotTag := splitTag(repo)
	return gotName == wantName && (gotTag == "" || gotTag == wantTag)
}

// splitTag splits an image reference without digest into name and tag.
func splitTag(ref string) (name, tag string) {
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

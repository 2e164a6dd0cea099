package verify

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/manifest"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// Apps is the apps repository the fleet must match.
type Apps struct {
	// Repo holds the loaded specs; it must be valid.
	Repo *load.Repo
	// SpecRevision is what render passes to generate.Options.SpecRevision:
	// the same function, so both write the same annotations.
	SpecRevision func(*load.LoadedApp) string
	// AtRelease loads the apps repository as a promotion rendered it: at
	// the commit ref, with the app folders given (the folder of each
	// spec → a revision) as they were at their revisions (see
	// render.LoadRelease). With it, the apps of an environment with
	// promote_from are rendered again from the release their files record
	// and compared like the others; without it, their files are taken as
	// they are.
	AtRelease func(ctx context.Context, ref string, folders map[string]string) (*load.Repo, error)
}

// desiredFleet renders the specs the way render does. Images that render
// resolved (pinned by digest, or built) are taken from the fleet when they
// are what the spec asks for: verify never asks a registry. Like render,
// it reads the fleet as it is (generate.Options.Previous), which decides
// where the Flux objects of each app go while they move to their
// project's source (see previous).
func (r *run) desiredFleet(ctx context.Context, apps *Apps, images map[string]string) (map[string][]byte, error) {
	repo := apps.Repo
	f, err := generate.Render(repo, generate.Options{
		Platform:     &repo.Platform,
		SpecRevision: apps.SpecRevision,
		Images:       images,
		Previous:     r.previous,
		PreviousDir:  generate.FilesIn(r.t.files),
	})
	if err != nil {
		return nil, err
	}
	files := f.Map()
	if apps.AtRelease != nil {
		if err := r.releases(ctx, apps, f, files); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// releases renders again, from the release each records, the apps of the
// environments with promote_from, which the render of the specs kept as
// the fleet has them, and puts them in files in place of the kept ones:
// the apps repository at the release's apps_commit, the app's folder at
// its spec_revision, its images those the release pins. An app whose
// files differ from that render has drifted like any other.
func (r *run) releases(ctx context.Context, apps *Apps, f *generate.Fleet, files map[string][]byte) error {
	plat := &apps.Repo.Platform
	type kept struct {
		app *load.LoadedApp
		rel *generate.Release
	}
	byCommit := map[string][]kept{}
	for _, a := range apps.Repo.Apps {
		e := plat.EnvironmentByName(a.Environment)
		if e == nil || e.Rendered() {
			continue
		}
		rf := layout.ReleaseFile(a.Cluster, a.Project, a.Spec.Name)
		data, ok := r.t.files[rf]
		if !ok {
			continue // not promoted there yet
		}
		rel, err := generate.ParseRelease(data)
		if err != nil {
			return fmt.Errorf("%s: %w", rf, err)
		}
		if rel.AppsCommit == "" || rel.SpecRevision == "" {
			return fmt.Errorf("%s: the release of %s in %s records no apps_commit or spec_revision: it was not written by a promotion; promote the app again (render promote %s --to %s)",
				rf, a.Spec.Name, a.Environment, a.Spec.Name, a.Environment)
		}
		byCommit[rel.AppsCommit] = append(byCommit[rel.AppsCommit], kept{a, rel})
	}
	byApp := map[string][]string{}
	for _, x := range f.Files {
		byApp[x.App] = append(byApp[x.App], x.Path)
	}
	for _, commit := range slices.Sorted(maps.Keys(byCommit)) {
		ks := byCommit[commit]
		folders := map[string]string{}
		for _, k := range ks {
			folders[path.Dir(k.app.File)] = k.rel.SpecRevision
		}
		repo, err := apps.AtRelease(ctx, commit, folders)
		if err != nil {
			return fmt.Errorf("loading the apps repository of the releases at %s: %w", commit, err)
		}
		releases := map[string]*generate.Release{}
		images := map[string]string{}
		for _, k := range ks {
			releases[k.app.Key()] = k.rel
		}
		for _, a := range repo.Apps {
			if rel, ok := releases[a.Key()]; ok {
				for c, img := range rel.Images {
					images[load.NodeID(a, c)] = img
				}
			}
		}
		rf, err := generate.Render(repo, generate.Options{
			Platform: &repo.Platform,
			SpecRevision: func(a *load.LoadedApp) string {
				if rel, ok := releases[a.Key()]; ok {
					return rel.SpecRevision
				}
				return ""
			},
			Images:      images,
			Previous:    r.previous,
			PreviousDir: generate.FilesIn(r.t.files),
			Promote: func(a *load.LoadedApp) (generate.Promotion, bool) {
				rel, ok := releases[a.Key()]
				if !ok {
					return generate.Promotion{}, false
				}
				return generate.Promotion{From: rel.PromotedFrom, AppsCommit: rel.AppsCommit}, true
			},
		})
		if err != nil {
			return fmt.Errorf("rendering the releases at %s: %w", commit, err)
		}
		for key := range releases {
			for _, p := range byApp[key] {
				delete(files, p)
			}
		}
		for _, x := range rf.Files {
			if _, ok := releases[x.App]; ok {
				files[x.Path] = x.Data
			}
		}
	}
	return nil
}

// pruneDisabledLine is the line of the annotation that the first render
// of the move to a project's source puts on an app's Flux objects.
var pruneDisabledLine = []byte(layout.PruneDisabledLine)

// emptiedLine is the line of the mark render puts on the Namespace of a
// project whose last app went (layout.EmptiedAnnotation).
var emptiedLine = []byte(layout.EmptiedLine)

// previous reads a file of the fleet being verified as the render that
// wrote it read it. That is the file itself, except for the Flux objects
// of an app that this fleet keeps in the cluster folder marked with
// kustomize.toolkit.fluxcd.io/prune: disabled: render marks them when it
// finds them unmarked (the first step of the move to the project's
// source), and moves them when it finds them marked (the second). The
// fleet is what the first step wrote, so the render it is compared with
// reads the file without the marks; reading it with them would compare
// the fleet with the next step, which render takes only once Flux has
// applied this one (an info finding says so).
//
// Likewise the first step of the move of an app's Kustomizations to their
// project's namespace keeps them in the Flux namespace with prune: false
// (render moves them when it finds them so): the render compared with
// reads them with prune: true, as they were before that step.
func (r *run) previous(p string) ([]byte, bool) {
	data, ok := r.t.files[p]
	if !ok {
		return data, ok
	}
	if bytes.Contains(data, pruneDisabledLine) {
		data = withoutLine(data, pruneDisabledLine)
	}
	if layout.IsEmptied(data) {
		data = withoutLine(data, emptiedLine)
	}
	if ns := []byte("\n  namespace: " + r.plat.Fleet.SourceNamespace + "\n"); bytes.Contains(data, ns) && bytes.Contains(data, pruneOff) {
		data = bytes.ReplaceAll(data, pruneOff, pruneOn)
	}
	return data, true
}

// The spec.prune lines of a Flux Kustomization as render writes them.
var pruneOff, pruneOn = []byte("\n  prune: false\n"), []byte("\n  prune: true\n")

// withoutLine returns data without its lines that are, but for spaces,
// line.
func withoutLine(data, line []byte) []byte {
	out := make([]byte, 0, len(data))
	for rest := data; len(rest) > 0; {
		l := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l = rest[:i+1]
		}
		rest = rest[len(l):]
		if !bytes.Equal(bytes.TrimSpace(l), line) {
			out = append(out, l...)
		}
	}
	return out
}

// fleetImages returns, for each workload, the image its Deployment in the
// fleet runs (as the object checks saw it) when that image is the one
// render resolved (see render.FleetImages).
func (r *run) fleetImages(repo *load.Repo) map[string]string {
	var byDir map[string][]string // component folder → its files, built on the first job
	src := render.FleetImages{Image: func(file, container string) string {
		return deploymentImage(r.t.files[file], container)
	}, Find: func(dir, prefix string) string {
		if byDir == nil {
			byDir = map[string][]string{}
			for p := range r.t.files {
				byDir[path.Dir(p)] = append(byDir[path.Dir(p)], p)
			}
		}
		for _, p := range byDir[dir] {
			if strings.HasPrefix(path.Base(p), prefix) {
				return p
			}
		}
		return ""
	}}
	images, _ := src.Images(context.Background(), render.ImageInput{Repo: repo})
	return images.ByNode
}

// deploymentImage returns the image of a Deployment file's container: found
// as text when the file has a single image line (as render writes it),
// else by parsing the file.
func deploymentImage(data []byte, container string) string {
	if data == nil {
		return ""
	}
	image, lines := "", 0
	for rest := data; ; {
		i := bytes.Index(rest, []byte("image: "))
		if i < 0 {
			break
		}
		start := bytes.LastIndexByte(rest[:i], '\n') + 1
		prefix := bytes.TrimLeft(rest[start:i], " ")
		end := bytes.IndexByte(rest[i:], '\n')
		if end < 0 {
			end = len(rest) - i
		}
		if len(prefix) == 0 || string(prefix) == "- " {
			lines++
			image = string(rest[i+len("image: ") : i+end])
		}
		rest = rest[i+end:]
	}
	if lines == 1 && image != "" && !strings.ContainsAny(image, "\"' #") {
		return image
	}
	docs, err := yamlx.Parse(data)
	if err != nil {
		return ""
	}
	for _, d := range docs {
		cs, _ := d.Root.Path("spec.template.spec.containers")
		if cs == nil {
			cs, _ = d.Root.Path("spec.jobTemplate.spec.template.spec.containers") // a CronJob
		}
		if cs == nil || cs.Kind != yamlx.SeqNode {
			continue
		}
		for _, c := range cs.Kids {
			if c.Get("name").Text() == container {
				return c.Get("image").Text()
			}
		}
	}
	return ""
}

// driftFindings compares the fleet with the desired files: a file that
// differs, is missing, or is generated but no longer rendered is an error
// with its unified diff.
func driftFindings(t *tree, desired map[string][]byte, managed []string, display string) []Finding {
	var out []Finding
	show := func(p string) string { return displayPath(display, p) }
	for p, want := range desired {
		got, ok := t.files[p]
		switch {
		case !ok:
			out = append(out, Finding{
				Check: CheckDrift, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: show(p),
					Message: "missing: the specs render this file; run render"},
				Diff: fleet.FileDiff(fleet.Change{Path: p, Op: fleet.Add, New: want}, display),
			})
		case !bytes.Equal(got, want):
			line := firstDifferentLine(got, want)
			out = append(out, Finding{
				Check: CheckDrift, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: show(p), Line: line,
					Message: "differs from what the specs render (edited by hand?); run render"},
				Diff: fleet.FileDiff(fleet.Change{Path: p, Op: fleet.Update, Old: got, New: want}, display),
			})
		}
	}
	for _, dir := range managed {
		for _, p := range t.under(dir) {
			if _, ok := desired[p]; ok || strings.Contains(path.Base(p), ".fleetwright-tmp-") {
				continue
			}
			data := t.files[p]
			if !bytes.HasPrefix(data, []byte(manifest.Header)) {
				msg := "not generated by fleetwright, in a folder render manages; render leaves it alone"
				if k := unlistedBy(t, p, dir); k != "" {
					msg += fmt.Sprintf(", and Flux does not apply it: %s does not list it, and render rewrites that file. "+
						"To have it applied, give it a folder of its own outside the folders render manages, with a Flux Kustomization for that folder", show(k))
				}
				out = append(out, Finding{
					Check: CheckDrift, Diagnostic: diag.Diagnostic{Severity: SeverityWarning, File: show(p), Line: 1,
						Message: msg},
				})
				continue
			}
			out = append(out, Finding{
				Check: CheckDrift, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: show(p), Line: 1,
					Message: "generated file that no spec renders any more; run render to delete it"},
				Diff: fleet.FileDiff(fleet.Change{Path: p, Op: fleet.Delete, Old: data}, display),
			})
		}
	}
	return out
}

// unlistedBy returns the kustomization file that governs the folder of p
// (the nearest one at or above it, up to root) when that file lists
// neither p nor a folder holding it, so that Flux does not apply p; ""
// when p is listed, or when no kustomization file governs it (Flux then
// applies every manifest of the folder).
func unlistedBy(t *tree, p, root string) string {
	dir := path.Dir(p)
	for {
		for _, n := range konfig.RecognizedKustomizationFileNames() {
			k := path.Join(dir, n)
			if _, ok := t.files[k]; !ok || k == p {
				continue
			}
			if listsPath(t.files[k], dir, p) {
				return ""
			}
			return k
		}
		if dir == root || dir == "." || !strings.HasPrefix(dir, root+"/") {
			return ""
		}
		dir = path.Dir(dir)
	}
}

// listsPath reports whether the kustomization data of folder dir names p,
// or a folder holding it, among its resources or components. Data that
// does not parse counts as listing it: the finding then claims nothing.
func listsPath(data []byte, dir, p string) bool {
	docs, err := yamlx.Parse(data)
	if err != nil || len(docs) != 1 || docs[0].Root == nil || docs[0].Root.Kind != yamlx.MapNode {
		return true
	}
	k := docs[0].Root
	for i := 0; i+1 < len(k.Kids); i += 2 {
		if key := k.Kids[i].Str; key != "resources" && key != "components" {
			continue
		}
		if k.Kids[i+1].Kind != yamlx.SeqNode {
			return true
		}
		for _, r := range k.Kids[i+1].Kids {
			full := path.Join(dir, r.Text())
			if full == p || strings.HasPrefix(p, full+"/") {
				return true
			}
		}
	}
	return false
}

// firstDifferentLine returns the 1-based line where a and b first differ.
func firstDifferentLine(a, b []byte) int {
	line := 1
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return line
		}
		if a[i] == '\n' {
			line++
		}
	}
	return line
}

// displayPath joins the fleet folder as the user gave it with a slash path.
func displayPath(display, p string) string {
	if display == "" || display == "." {
		return p
	}
	return path.Join(filepath.ToSlash(display), p)
}

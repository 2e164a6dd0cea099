package verify

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/manifest"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// Apps is the apps repository the fleet must match.
type Apps struct {
	// Repo holds the loaded specs; it must be valid.
	Repo *spec.Repo
	// SpecRevision is what render passes to generate.Options.SpecRevision:
	// the same function, so both write the same annotations.
	SpecRevision func(*spec.LoadedApp) string
}

// LoadApps reads and validates the apps repository at root: from the folder
// itself, or, when ref is set, from that Git ref of the repository holding
// root (the work tree is not touched). display is put before file names in
// problems.
func LoadApps(ctx context.Context, root, ref, display string) (*spec.Repo, spec.Problems, error) {
	loader, err := spec.NewLoader(exports.Catalog{}, display)
	if err != nil {
		return nil, nil, err
	}
	if ref == "" {
		repo, ps := loader.Load(os.DirFS(root))
		return repo, ps, nil
	}
	gitRoot, sub, err := findGitRoot(root)
	if err != nil {
		return nil, nil, err
	}
	g, err := gitrepo.Open(gitRoot)
	if err != nil {
		return nil, nil, err
	}
	prefixes := []string{path.Join(sub, "apps")}
	for _, n := range spec.PlatformFileNames {
		prefixes = append(prefixes, path.Join(sub, n))
	}
	files, err := g.Tree(ctx, ref, prefixes...)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s at %s: %w", root, ref, err)
	}
	if sub != "" {
		trimmed := make(map[string][]byte, len(files))
		for p, b := range files {
			trimmed[strings.TrimPrefix(p, sub+"/")] = b
		}
		files = trimmed
	}
	repo, ps := loader.LoadFiles(files)
	return repo, ps, nil
}

// findGitRoot returns the work tree holding dir and dir's slash path in it.
func findGitRoot(dir string) (root, sub string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	for d := abs; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d, relSlash(d, abs), nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", fmt.Errorf("%s is not inside a Git work tree", dir)
		}
		d = parent
	}
}

// desiredFleet renders the specs the way render does. Images that render
// resolved (pinned by digest, or built) are taken from the fleet when they
// are what the spec asks for: verify never asks a registry.
func (r *run) desiredFleet(apps *Apps, images map[string]string) (map[string][]byte, error) {
	repo := apps.Repo
	f, err := generate.Render(repo, generate.Options{
		Platform:     &repo.Platform,
		SpecRevision: apps.SpecRevision,
		Images:       images,
	})
	if err != nil {
		return nil, err
	}
	return f.Map(), nil
}

// fleetImages returns, for each workload, the image its Deployment in the
// fleet runs (as the object checks saw it) when that image is the spec's
// image resolved to a digest, or, for built images, an image of the
// repository render pushes to.
func (r *run) fleetImages(repo *spec.Repo) map[string]string {
	images := map[string]string{}
	for _, a := range repo.Apps {
		for _, c := range a.Spec.Components {
			w := c.WorkloadSpec
			if w == nil {
				continue
			}
			name := a.Spec.Name + "-" + c.Name
			file := path.Join("apps", a.Cluster, a.Project, a.Spec.Name, c.Name, "deployment-"+name+".yaml")
			got := deploymentImage(r.t.files[file], c.Name)
			if got == "" {
				continue
			}
			built := w.BuildMode == spec.BuildModeDockerfile || w.BuildMode == spec.BuildModeBuildpack
			want := w.Image
			if built {
				want = path.Join(repo.Platform.Registry, a.Project, name)
			}
			if imageMatches(want, got, built) {
				images[spec.NodeID(a, c.Name)] = got
			}
		}
	}
	return images
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
				Check: CheckDrift, Severity: SeverityError, File: show(p),
				Message: "missing: the specs render this file; run render",
				Diff:    fleet.FileDiff(fleet.Change{Path: p, Op: fleet.Add, New: want}, display),
			})
		case !bytes.Equal(got, want):
			line := firstDifferentLine(got, want)
			out = append(out, Finding{
				Check: CheckDrift, Severity: SeverityError, File: show(p), Line: line,
				Message: "differs from what the specs render (edited by hand?); run render",
				Diff:    fleet.FileDiff(fleet.Change{Path: p, Op: fleet.Update, Old: got, New: want}, display),
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
				out = append(out, Finding{
					Check: CheckDrift, Severity: SeverityWarning, File: show(p), Line: 1,
					Message: "not generated by fleetwright, in a folder render manages; render leaves it alone",
				})
				continue
			}
			out = append(out, Finding{
				Check: CheckDrift, Severity: SeverityError, File: show(p), Line: 1,
				Message: "generated file that no spec renders any more; run render to delete it",
				Diff:    fleet.FileDiff(fleet.Change{Path: p, Op: fleet.Delete, Old: data}, display),
			})
		}
	}
	return out
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

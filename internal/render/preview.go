package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/template"
)

// Previews in the fleet: each open preview is its Flux Kustomization file
// in the previews' cluster folder (layout.PreviewFile) and its folder,
// whose record (layout.PreviewRecordFile) lists its files. A preview is
// landed as the whole set of previews of the cluster: the folders
// PreviewFolders names are the landing's, and the files of every preview
// that stays are carried over as the fleet has them, so that a preview
// writes only its own files and the removal of an expired or closed one
// deletes exactly its own.

// ChangedApps returns the apps of repo (loaded at head; each project/name,
// sorted) whose folder, or the stack template they use, differs between
// the merge base of base and head, and head: the apps a pull request from
// head into base changes.
func (r *GitRepo) ChangedApps(ctx context.Context, base, head string, repo *load.Repo) ([]string, error) {
	mb, err := r.g.MergeBase(base, head)
	if err != nil {
		return nil, err
	}
	folders := []string{"apps", template.Dir}
	before, _, err := (&gitSource{r: r, ref: mb}).tree(ctx, folders)
	if err != nil {
		return nil, err
	}
	after, _, err := (&gitSource{r: r, ref: head}).tree(ctx, folders)
	if err != nil {
		return nil, err
	}
	changedDirs := map[string]bool{}
	for p, b := range after {
		if old, ok := before[p]; !ok || !bytes.Equal(old, b) {
			changedDirs[path.Dir(p)] = true
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			changedDirs[path.Dir(p)] = true
		}
	}
	set := map[string]bool{}
	for _, a := range repo.Apps {
		dirs := []string{path.Dir(a.File)}
		if t := a.Spec.Template; t != nil {
			dirs = append(dirs, load.TemplateDir(t.Name))
		}
		for _, dir := range dirs {
			for d := range changedDirs {
				if d == dir || strings.HasPrefix(d, dir+"/") {
					set[a.Ref()] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(set)), nil
}

// MergeBase returns the merge base of two revisions.
func (r *GitRepo) MergeBase(a, b string) (string, error) { return r.g.MergeBase(a, b) }

// OpenPreview is a preview the fleet holds.
type OpenPreview struct {
	PR     int
	Record *generate.PreviewRecord
	// Files are the preview's files as the fleet has them, its record and
	// its Flux Kustomization file included.
	Files map[string][]byte
}

// PreviewFolders are the fleet folders that hold the previews of the
// platform's previews cluster: the landing of a preview owns them.
func PreviewFolders(plat *spec.Platform) []string {
	if plat.Previews == nil {
		return nil
	}
	c := plat.Previews.Cluster
	return []string{path.Join(layout.PreviewsDir, c), layout.PreviewFilesDir(plat, c)}
}

// BrokenPreview is a preview of the fleet whose record cannot be read, or
// lists files the fleet lacks: a landing of the previews removes it.
type BrokenPreview struct {
	PR      int
	Warning string
}

// ReadPreviews returns the previews the fleet holds (read and list read
// it, as sink.Before does), by pull request, and those that are broken.
func ReadPreviews(plat *spec.Platform, read func(string) ([]byte, bool), list func(string) []string) (map[int]*OpenPreview, []BrokenPreview) {
	out := map[int]*OpenPreview{}
	if plat.Previews == nil {
		return out, nil
	}
	var warnings []BrokenPreview
	c := plat.Previews.Cluster
	for _, f := range list(layout.PreviewFilesDir(plat, c)) {
		pr, ok := layout.PreviewOfFile(plat, c, f)
		if !ok {
			continue
		}
		k, _ := read(f)
		rf := layout.PreviewRecordFile(c, pr)
		data, ok := read(rf)
		if !ok {
			warnings = append(warnings, BrokenPreview{pr, fmt.Sprintf("preview pr-%d has no record (%s): it is removed", pr, rf)})
			continue
		}
		rec, err := generate.ParsePreviewRecord(data)
		if err == nil && rec.PullRequest != pr {
			err = fmt.Errorf("the record of pull request #%d", rec.PullRequest)
		}
		if err != nil {
			warnings = append(warnings, BrokenPreview{pr, fmt.Sprintf("preview pr-%d: %s: %v: it is removed", pr, rf, err)})
			continue
		}
		p := &OpenPreview{PR: pr, Record: rec, Files: map[string][]byte{f: k, rf: data}}
		dir := layout.PreviewDir(c, pr) + "/"
		missing := false
		for _, x := range rec.Files {
			if !strings.HasPrefix(x, dir) {
				continue // only its own folder's; the Flux file is read above
			}
			b, ok := read(x)
			if !ok {
				missing = true
				break
			}
			p.Files[x] = b
		}
		if missing {
			warnings = append(warnings, BrokenPreview{pr, fmt.Sprintf("preview pr-%d: %s lists files the fleet does not have: it is removed", pr, rf)})
			continue
		}
		out[pr] = p
	}
	return out, warnings
}

// Expired returns the previews last updated longer than previews.ttl
// before now, sorted by pull request.
func Expired(plat *spec.Platform, open map[int]*OpenPreview, now time.Time) []*OpenPreview {
	if plat.Previews == nil {
		return nil
	}
	ttl := plat.Previews.TTLDuration()
	var out []*OpenPreview
	for _, pr := range slices.Sorted(maps.Keys(open)) {
		if p := open[pr]; now.Sub(p.Record.Updated) > ttl {
			out = append(out, p)
		}
	}
	return out
}

// ExpiredLine is the line render prints, and writes in the fleet commit,
// for an expired preview.
func ExpiredLine(plat *spec.Platform, p *OpenPreview, now time.Time) string {
	return fmt.Sprintf("preview %s removed: last updated %s, older than previews.ttl %s (apps %s)",
		layout.PreviewEnvironment(p.PR), p.Record.Updated.UTC().Format(time.RFC3339), plat.Previews.TTLDuration(), strings.Join(p.Record.Apps, ", "))
}

// KeepPreviews returns the files of the previews in open that stay, those
// not in drop: what a landing that owns PreviewFolders carries over.
func KeepPreviews(open map[int]*OpenPreview, drop map[int]bool) map[string][]byte {
	out := map[string][]byte{}
	for pr, p := range open {
		if drop[pr] {
			continue
		}
		maps.Copy(out, p.Files)
	}
	return out
}

// PreviewInput is what RenderPreview renders.
type PreviewInput struct {
	Preview *load.Preview
	// Head is the pull request's head commit: the spec revision of every
	// Flux object, and the record's.
	Head string
	// Images are the built images by node of Preview.Build (see
	// spec.Preview.BuildNode).
	Images map[string]string
	// Was is the preview's record before, nil for a new preview.
	Was *generate.PreviewRecord
	// Now is the time of the render.
	Now time.Time
}

// RenderPreview renders a preview's files, its record included, and
// checks that they stay in the preview: every file in its folder or its
// Flux file, every namespaced object in a preview namespace of the pull
// request, every ingress host under previews.apps_domain.
func RenderPreview(in PreviewInput) (*generate.Fleet, *generate.PreviewRecord, error) {
	p := in.Preview
	plat := &p.Repo.Platform
	images := make(map[string]string, len(in.Images))
	for node, img := range in.Images {
		images[p.BuildNode(node)] = img
	}
	f, err := generate.RenderPreview(p, generate.Options{
		Images:       images,
		SpecRevision: func(*load.LoadedApp) string { return in.Head },
	})
	if err != nil {
		return nil, nil, err
	}
	if err := CheckPreviewFiles(plat, p.PR, plat.Fleet.Path, f.Map()); err != nil {
		return nil, nil, err
	}
	rec := &generate.PreviewRecord{
		PullRequest: p.PR, Environment: layout.PreviewEnvironment(p.PR), Head: in.Head,
		Apps: p.Apps, URLs: PreviewURLs(p), Created: in.Now, Updated: in.Now,
	}
	for _, s := range p.Skipped {
		rec.Skipped = append(rec.Skipped, generate.PreviewSkip{App: s.App, Reason: s.Reason})
	}
	for _, x := range f.Files {
		rec.Files = append(rec.Files, x.Path)
	}
	slices.Sort(rec.Files)
	if w := in.Was; w != nil {
		rec.Created = w.Created
		// Unchanged, it keeps its time: a render that changes nothing
		// commits nothing, and does not extend its life.
		same := *rec
		same.Updated = w.Updated
		if a, err1 := generate.PreviewRecordData(&same); err1 == nil {
			if b, err2 := generate.PreviewRecordData(w); err2 == nil && bytes.Equal(a, b) {
				rec = &same
			}
		}
	}
	data, err := generate.PreviewRecordData(rec)
	if err != nil {
		return nil, nil, err
	}
	f.Files = append(f.Files, generate.File{Path: layout.PreviewRecordFile(plat.Previews.Cluster, p.PR), Data: data})
	slices.SortFunc(f.Files, func(a, b generate.File) int { return strings.Compare(a.Path, b.Path) })
	return f, rec, nil
}

// PreviewURLs are the https addresses of the preview's apps, by app.
func PreviewURLs(p *load.Preview) map[string][]string {
	out := map[string][]string{}
	for _, a := range p.Repo.Apps {
		for i := range a.Spec.Components {
			c := &a.Spec.Components[i]
			if c.WorkloadSpec == nil || c.WorkloadSpec.Ingress == nil || !c.WorkloadSpec.Ingress.Enabled {
				continue
			}
			k := layout.AppRef{Project: a.ProjectName(), Name: a.Spec.Name}.Ref()
			out[k] = append(out[k], "https://"+load.IngressHost(a, c, &p.Repo.Platform))
		}
	}
	// The app's own address first, then the others by name.
	for _, a := range p.Repo.Apps {
		k := layout.AppRef{Project: a.ProjectName(), Name: a.Spec.Name}.Ref()
		main := "https://" + a.Spec.Name + "-" + a.Project + "." + p.Repo.Platform.AppsDomain
		slices.SortFunc(out[k], func(x, y string) int {
			switch {
			case x == y:
				return 0
			case x == main:
				return -1
			case y == main:
				return 1
			}
			return strings.Compare(x, y)
		})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// PreviewError lists what reaches outside a preview: each a file of the
// preview (its File) and why (its Message).
type PreviewError struct{ Problems []diag.Diagnostic }

func (e *PreviewError) Error() string {
	var b strings.Builder
	b.WriteString("the preview reaches outside itself:")
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  %s: %s", p.File, p.Message)
	}
	return b.String()
}

// CheckPreviewFiles checks the files of pull request pr's preview (by
// fleet path): each in the preview's folder or its Flux file, each
// object's namespace a preview namespace of pr (or, for the preview's
// own Flux objects, the Flux namespace), each Flux Kustomization's path
// in the preview's folder (fleetPath is the fleet's folder in its Git
// repository, as Kustomization paths start with it), each Ingress host
// under previews.apps_domain. verify runs the same check on the fleet.
func CheckPreviewFiles(plat *spec.Platform, pr int, fleetPath string, files map[string][]byte) error {
	pv := plat.Previews
	c := &previewCheck{plat: plat, pr: pr,
		within:   "./" + path.Join(fleetPath, layout.PreviewDir(pv.Cluster, pr)),
		dir:      layout.PreviewDir(pv.Cluster, pr) + "/",
		fluxFile: layout.PreviewFile(plat, pv.Cluster, pr),
		named:    layout.PreviewNamespace("<project>", pr),
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if p != c.fluxFile && !strings.HasPrefix(p, c.dir) {
			c.add(p, fmt.Sprintf("outside the preview's folder %s", strings.TrimSuffix(c.dir, "/")))
			continue
		}
		if path.Base(p) == layout.Kustomization || p == layout.PreviewRecordFile(pv.Cluster, pr) {
			continue
		}
		for _, doc := range bytes.Split(files[p], []byte("\n---\n")) {
			var obj previewObject
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				c.add(p, fmt.Sprintf("not YAML: %v", err))
				continue
			}
			if obj.Kind != "" {
				c.object(p, &obj)
			}
		}
	}
	if len(c.probs) > 0 {
		return &PreviewError{Problems: c.probs}
	}
	return nil
}

// previewObject is what CheckPreviewFiles reads of an object.
type previewObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		SourceRef struct {
			Kind string `json:"kind"`
		} `json:"sourceRef"`
		Path            string `json:"path"`
		TargetNamespace string `json:"targetNamespace"`
		Rules           []struct {
			Host string `json:"host"`
		} `json:"rules"`
		TLS []struct {
			Hosts []string `json:"hosts"`
		} `json:"tls"`
		EventSources []struct {
			Namespace string `json:"namespace"`
		} `json:"eventSources"`
	} `json:"spec"`
}

// previewCheck is one run of CheckPreviewFiles: the preview's folder
// (dir, and within as Kustomization paths name it), its Flux file, and the
// problems found.
type previewCheck struct {
	plat                         *spec.Platform
	pr                           int
	within, dir, fluxFile, named string
	probs                        []diag.Diagnostic
}

func (c *previewCheck) add(file, msg string) {
	c.probs = append(c.probs, diag.Diagnostic{File: file, Message: msg, Severity: diag.Error})
}

// object checks an object of file p: its namespace, its Flux path and
// target, and its hosts.
func (c *previewCheck) object(p string, obj *previewObject) {
	what := obj.Kind + " " + obj.Metadata.Name
	inPreview := func(ns string) bool {
		_, n, ok := layout.ParsePreviewNamespace(ns)
		return ok && n == c.pr
	}
	// A component folder's objects live in its project's preview
	// namespace: the folder's own (apps/<cluster>/<namespace>/…).
	if l := layout.Parse(strings.TrimPrefix(p, c.dir)); l.Preview == 0 && (l.App != "" || l.Folder != "") {
		own := l.Project
		inProject := inPreview
		inPreview = func(ns string) bool { return ns == own && inProject(ns) }
	}
	fluxNS := c.plat.Fleet.SourceNamespace
	switch ns := obj.Metadata.Namespace; {
	case p == c.fluxFile:
		if obj.Kind != "Kustomization" || obj.Metadata.Name != layout.PreviewFluxName(c.pr) || ns != fluxNS {
			c.add(p, fmt.Sprintf("%s: the preview's Flux file holds its Kustomization %s/%s only", what, fluxNS, layout.PreviewFluxName(c.pr)))
		}
	case obj.Kind == "Namespace":
		if !inPreview(obj.Metadata.Name) {
			c.add(p, fmt.Sprintf("%s: not a namespace of pull request #%d's preview (%s)", what, c.pr, c.named))
		}
	case ns == "" && !isClusterScopedAllowed(obj.Kind):
		c.add(p, fmt.Sprintf("%s: names no namespace; a preview's objects live in its namespaces", what))
	case ns != "" && !inPreview(ns) && ns != fluxNS:
		c.add(p, fmt.Sprintf("%s: namespace %s is not one of pull request #%d's preview (%s)", what, ns, c.pr, c.named))
	case obj.Kind == "Alert" && ns == fluxNS:
		// fleet.notifications: the preview namespace's Alert,
		// fleetwright-<namespace>, as a project's file holds it.
		if own, ok := strings.CutPrefix(obj.Metadata.Name, "fleetwright-"); !ok || !inPreview(own) || strings.HasPrefix(p, c.dir+layout.AppsDir+"/") {
			c.add(p, fmt.Sprintf("%s: a preview's Alert is fleetwright-<its namespace>, in its project file only", what))
		}
		for _, src := range obj.Spec.EventSources {
			if !inPreview(src.Namespace) {
				c.add(p, fmt.Sprintf("%s: it sends the events of namespace %q, not one of the preview's", what, src.Namespace))
			}
		}
	case ns == fluxNS && !previewFluxKind(obj.Kind):
		c.add(p, fmt.Sprintf("%s: only Flux objects of the preview may live in %s", what, ns))
	}
	// A path in the fleet's GitRepository; one in an artifact
	// (an OCIRepository, fleet.artifacts) is the artifact's own.
	if obj.Kind == "Kustomization" && obj.Spec.Path != "" && obj.Spec.SourceRef.Kind != "OCIRepository" {
		if q := "./" + strings.TrimPrefix(path.Clean(obj.Spec.Path), "./"); q != c.within && !strings.HasPrefix(q, c.within+"/") {
			c.add(p, fmt.Sprintf("%s: path %s is not in the preview's folder %s", what, obj.Spec.Path, c.within))
		}
	}
	if t := obj.Spec.TargetNamespace; t != "" && !inPreview(t) {
		c.add(p, fmt.Sprintf("%s: targetNamespace %s is not one of the preview's", what, t))
	}
	if obj.Kind == "Ingress" {
		c.hosts(p, what, obj)
	}
}

// hosts checks that each host of an Ingress is under previews.apps_domain.
func (c *previewCheck) hosts(p, what string, obj *previewObject) {
	domain := c.plat.Previews.AppsDomain
	for _, r := range obj.Spec.Rules {
		if !strings.HasSuffix(r.Host, "."+domain) {
			c.add(p, fmt.Sprintf("%s: host %q is not under previews.apps_domain %s", what, r.Host, domain))
		}
	}
	for _, t := range obj.Spec.TLS {
		for _, h := range t.Hosts {
			if !strings.HasSuffix(h, "."+domain) {
				c.add(p, fmt.Sprintf("%s: TLS host %q is not under previews.apps_domain %s", what, h, domain))
			}
		}
	}
}

// isClusterScopedAllowed reports whether a preview may hold an object of
// kind without a namespace: none but its Namespaces, which are checked by
// name.
func isClusterScopedAllowed(kind string) bool { return kind == "Namespace" }

// previewFluxKind reports whether kind is a Flux object a preview may keep
// in the Flux namespace (a cluster reached through a kubeconfig keeps its
// apps' Flux objects there).
func previewFluxKind(kind string) bool {
	switch kind {
	case "Kustomization", "OCIRepository", "HelmRelease", "HelmRepository", "GitRepository":
		return true
	}
	return false
}

// ErrPreviewLimit is a new preview refused by previews.max.
var ErrPreviewLimit = errors.New("previews.max reached")

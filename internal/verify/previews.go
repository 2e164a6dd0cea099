package verify

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Previews (docs/environments.md, "Previews"): a pull request's preview
// is its folder previews/<cluster>/pr-<N>/ and its Flux Kustomization file
// in the previews' cluster folder. verify builds and checks their objects
// like every other's (the tenancy checks take a preview's component
// folders as its project's, its namespace <project>-pr<N>), and checks
// that each preview stays in itself: its files in its folder, its objects
// in its namespaces, its Kustomizations' paths in its folder, its hosts
// under previews.apps_domain, its record in place.

// CheckPreview is a preview that reaches outside itself, or a file in the
// previews' folders that is no preview's.
const CheckPreview Check = "preview"

// checkPreviews checks the previews' folders and files.
func (r *run) checkPreviews() {
	pv := r.plat.Previews
	byPR := map[int]map[string][]byte{}
	bad := func(p, msg string) {
		r.findings.add(Finding{Check: CheckPreview, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(p), Message: msg}})
	}
	for _, p := range r.t.paths {
		var cluster string
		var pr int
		var ok bool
		switch {
		case strings.HasPrefix(p, layout.PreviewsDir+"/"):
			cluster, pr, ok = layout.PreviewOfPath(p)
			if !ok {
				bad(p, "not in a preview's folder: previews hold previews/<cluster>/pr-<N>/ only")
				continue
			}
		default:
			c := r.clusterOf(p)
			if c == "" || !strings.HasPrefix(p, layout.PreviewFilesDir(r.plat, c)+"/") {
				continue
			}
			cluster = c
			if pr, ok = layout.PreviewOfFile(r.plat, c, p); !ok {
				bad(p, fmt.Sprintf("not a preview's Flux file: %s holds pr-<N>.yaml files only", layout.PreviewFilesDir(r.plat, c)))
				continue
			}
		}
		switch {
		case pv == nil:
			bad(p, "a preview's file, and platform.yaml declares no previews")
			continue
		case cluster != pv.Cluster:
			bad(p, fmt.Sprintf("a preview on cluster %s; previews run on %s (platform.yaml previews.cluster)", cluster, pv.Cluster))
			continue
		}
		if byPR[pr] == nil {
			byPR[pr] = map[string][]byte{}
		}
		byPR[pr][p] = r.t.files[p]
	}
	for _, pr := range slices.Sorted(maps.Keys(byPR)) {
		files := byPR[pr]
		rf := layout.PreviewRecordFile(pv.Cluster, pr)
		switch data, ok := files[rf]; {
		case !ok:
			bad(layout.PreviewDir(pv.Cluster, pr), fmt.Sprintf("preview %s has no record (%s)", layout.PreviewEnvironment(pr), layout.PreviewRecordFileName))
		default:
			rec, err := generate.ParsePreviewRecord(data)
			if err == nil && rec.PullRequest != pr {
				err = fmt.Errorf("the record of pull request #%d", rec.PullRequest)
			}
			if err != nil {
				bad(rf, fmt.Sprintf("not a preview's record: %v", err))
			}
		}
		if _, ok := files[layout.PreviewFile(r.plat, pv.Cluster, pr)]; !ok {
			r.findings.add(Finding{Check: CheckPreview, Diagnostic: diag.Diagnostic{Severity: SeverityWarning, File: r.display(layout.PreviewDir(pv.Cluster, pr)),
				Message: fmt.Sprintf("preview %s has no Flux file (%s): Flux does not apply it", layout.PreviewEnvironment(pr), layout.PreviewFile(r.plat, pv.Cluster, pr))}})
		}
		var pe *render.PreviewError
		if err := render.CheckPreviewFiles(r.plat, pr, r.prefix, files); errors.As(err, &pe) {
			for _, p := range pe.Problems {
				bad(p.File, p.Message)
			}
		} else if err != nil {
			bad(layout.PreviewDir(pv.Cluster, pr), err.Error())
		}
	}
}

// inPreview returns the fleet path p with a preview's folder
// (previews/<cluster>/pr-<N>/) taken off its front: inside it, a preview's
// files are laid out as the fleet's.
func inPreview(p string) string {
	if _, _, rest, ok := layout.SplitPreview(p); ok {
		return rest
	}
	return p
}

// previewDrift renders each preview of the fleet again, as render preview
// rendered it: the apps repository at the head commit its record names,
// the apps it records (previewed and skipped), the images its files run
// where they are what the specs ask for, and its record's times; a file
// that differs, is missing, or is no longer rendered is drift. A preview
// whose head commit the apps repository lacks (a pull request's head is
// not on its branches) is not rendered again, and says so.
func (r *run) previewDrift(ctx context.Context, apps *Apps) []Finding {
	pv := r.plat.Previews
	if pv == nil || apps.AtRelease == nil {
		return nil
	}
	read := func(p string) ([]byte, bool) { b, ok := r.t.files[p]; return b, ok }
	open, _ := render.ReadPreviews(r.plat, read, generate.FilesIn(r.t.files)) // checkPreviews reports the broken
	var out []Finding
	for _, pr := range slices.Sorted(maps.Keys(open)) {
		rec := open[pr].Record
		dir := layout.PreviewDir(pv.Cluster, pr)
		info := func(msg string) {
			out = append(out, Finding{Check: CheckDrift, Diagnostic: diag.Diagnostic{Severity: SeverityInfo, File: r.display(dir), Message: msg}})
		}
		repo, err := apps.AtRelease(ctx, rec.Head, nil)
		if err != nil {
			info(fmt.Sprintf("preview %s is not rendered again: the apps repository at its head commit %s: %v", rec.Environment, rec.Head, err))
			continue
		}
		loader, err := render.NewLoader("")
		if err != nil {
			return append(out, Finding{Check: CheckDrift, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(dir), Message: err.Error()}})
		}
		changed := slices.Clone(rec.Apps)
		for _, s := range rec.Skipped {
			changed = append(changed, s.App)
		}
		p, ps := loader.PreviewOf(repo, pr, changed)
		if ps.HasErrors() {
			info(fmt.Sprintf("preview %s is not rendered again: its apps at %s are invalid: %v", rec.Environment, rec.Head, ps.Err()))
			continue
		}
		f, _, err := render.RenderPreview(render.PreviewInput{Preview: p, Head: rec.Head, Images: r.previewImages(p), Was: rec, Now: rec.Updated})
		if err != nil {
			out = append(out, Finding{Check: CheckDrift, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(dir), Message: fmt.Sprintf("rendering preview %s again: %v", rec.Environment, err)}})
			continue
		}
		for _, d := range driftFindings(r.t, f.Map(), []string{dir}, r.opts.Display) {
			d.Message = strings.Replace(d.Message, "the specs render", fmt.Sprintf("preview %s's specs at %s render", rec.Environment, shortHead(rec.Head)), 1)
			d.Message = strings.Replace(d.Message, "; run render", fmt.Sprintf("; run render preview --pr %d", pr), 1)
			out = append(out, d)
		}
	}
	return out
}

// previewImages are the images a preview's files run, by node of p.Build,
// where they are what its specs ask for: as for the environments
// (fleetImages), its component folders read in the preview's folder.
func (r *run) previewImages(p *load.Preview) map[string]string {
	cluster := p.Repo.Platform.Previews.Cluster
	// apps/<cluster>/<project>/<rest> → the preview's copy of it.
	in := func(file string) string {
		parts := strings.SplitN(file, "/", 4)
		if len(parts) < 4 {
			return file
		}
		return path.Join(layout.PreviewDir(cluster, p.PR), parts[0], parts[1], layout.PreviewNamespace(parts[2], p.PR), parts[3])
	}
	src := render.FleetImages{Image: func(file, container string) string {
		return deploymentImage(r.t.files[in(file)], container)
	}, Find: func(dir, prefix string) string {
		for _, f := range r.t.under(in(dir)) {
			if path.Dir(f) == in(dir) && strings.HasPrefix(path.Base(f), prefix) {
				return f
			}
		}
		return ""
	}}
	images, _ := src.Images(context.Background(), render.ImageInput{Repo: p.Build})
	return images.ByNode
}

func shortHead(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

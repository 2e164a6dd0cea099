package verify

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/render"
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
		r.findings.add(Finding{Check: CheckPreview, Severity: SeverityError, File: r.display(p), Message: msg})
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
			r.findings.add(Finding{Check: CheckPreview, Severity: SeverityWarning, File: r.display(layout.PreviewDir(pv.Cluster, pr)),
				Message: fmt.Sprintf("preview %s has no Flux file (%s): Flux does not apply it", layout.PreviewEnvironment(pr), layout.PreviewFile(r.plat, pv.Cluster, pr))})
		}
		var pe *render.PreviewError
		if err := render.CheckPreviewFiles(r.plat, pr, r.prefix, files); errors.As(err, &pe) {
			for _, p := range pe.Problems {
				bad(p.File, p.Reason)
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
	rest, ok := strings.CutPrefix(p, layout.PreviewsDir+"/")
	if !ok {
		return p
	}
	_, rest, ok1 := strings.Cut(rest, "/")
	env, rest, ok2 := strings.Cut(rest, "/")
	if !ok1 || !ok2 {
		return p
	}
	if _, ok := layout.PreviewOf(env); !ok {
		return p
	}
	return rest
}

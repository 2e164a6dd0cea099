package generate

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/manifest"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Previews: pull request N's preview renders its apps' copies (see
// spec.Preview) as render renders an environment, into the preview's own
// folder (layout.PreviewDir), with the fleet layout inside it, its
// Kustomizations' paths pointing there. One Flux Kustomization in the
// cluster folder (layout.PreviewFile), which the cluster's root
// Kustomization applies, applies the preview's own cluster folder: its
// preview namespaces, their accounts and bindings (as a project's file
// holds them), and the apps' Flux Kustomizations, which run as the
// preview namespace's account. Deleting that file deletes the preview:
// Flux prunes everything it applied, the namespaces included.

// PreviewRecord is a preview's record (layout.PreviewRecordFile): what it
// was rendered from, and when it was opened and last updated, which
// previews.ttl and previews.max read.
type PreviewRecord struct {
	// PullRequest is the pull request's number on the apps repository.
	PullRequest int `json:"pull_request"`
	// Environment is the preview's environment name, pr-<N>.
	Environment string `json:"environment"`
	// Head is the pull request's head commit rendered: the spec revision
	// of every Flux object of the preview.
	Head string `json:"head"`
	// Apps are the apps previewed (project/name), sorted.
	Apps []string `json:"apps"`
	// Skipped are the apps left out, and why.
	Skipped []PreviewSkip `json:"skipped,omitempty"`
	// URLs are the apps' addresses, by app (project/name).
	URLs map[string][]string `json:"urls,omitempty"`
	// Files are the preview's fleet files, the record aside, sorted.
	Files []string `json:"files"`
	// Created is when the preview was first rendered; Updated when it last
	// changed (UTC, RFC 3339).
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// PreviewSkip is an app a preview leaves out.
type PreviewSkip struct {
	App    string `json:"app"`
	Reason string `json:"reason"`
}

// ParsePreviewRecord reads a preview's record.
func ParsePreviewRecord(data []byte) (*PreviewRecord, error) {
	var r PreviewRecord
	if err := yaml.UnmarshalStrict(data, &r); err != nil {
		return nil, err
	}
	if r.PullRequest <= 0 || r.Environment != layout.PreviewEnvironment(r.PullRequest) {
		return nil, errors.New("not the record of a pull request's preview")
	}
	if r.Updated.IsZero() {
		return nil, errors.New("no updated time")
	}
	for _, f := range r.Files {
		if f == "" || path.IsAbs(f) || path.Clean(f) != f || strings.HasPrefix(f, "../") || f == ".." {
			return nil, fmt.Errorf("files: %q is not a fleet file", f)
		}
	}
	return &r, nil
}

// PreviewRecordData encodes a preview's record as its file holds it.
func PreviewRecordData(r *PreviewRecord) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(manifest.Header)
	b.WriteString("# The record of pull request #" + itoa(r.PullRequest) + "'s preview: previews.ttl and previews.max read it (docs/environments.md).\n")
	c := *r
	c.Created, c.Updated = c.Created.UTC(), c.Updated.UTC()
	if err := manifest.Append(&b, c); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// RenderPreview renders the preview p: its apps' files under the
// preview's folder and the Flux Kustomization that applies them, its
// record aside (the caller adds it, see PreviewRecordData). opts is as for
// Render, with Images keyed by p.Repo's nodes; Reuse, Previous,
// PreviousDir and Promote are not used: a preview is written whole.
func RenderPreview(p *load.Preview, opts Options) (*Fleet, error) {
	plat := &p.Repo.Platform
	if plat.Previews == nil {
		return nil, errors.New("the platform declares no previews")
	}
	cluster := plat.Previews.Cluster
	dir := layout.PreviewDir(cluster, p.PR)
	fleetPath := opts.FleetPath
	if fleetPath == "" {
		fleetPath = plat.Fleet.Path
	}
	opts.Platform = plat
	opts.FleetPath = path.Join(fleetPath, dir)
	opts.Prefix = dir
	opts.Reuse, opts.Previous, opts.PreviousDir, opts.Promote = nil, nil, nil, nil
	inner, err := Render(p.Repo, opts)
	if err != nil {
		return nil, err
	}
	// With fleet.artifacts, the components' and projects' artifacts are
	// named after their folders in the preview's: Artifacts finds them there.
	out := &Fleet{prefix: dir, ProjectArtifacts: inner.ProjectArtifacts}
	for _, f := range inner.Files {
		if strings.HasPrefix(f.Path, "../") || path.IsAbs(f.Path) {
			return nil, fmt.Errorf("a preview file outside the preview: %s", f.Path)
		}
		f.Path = path.Join(dir, f.Path)
		out.Files = append(out.Files, f)
	}
	k, err := previewKustomization(plat, cluster, p.PR, "./"+path.Join(fleetPath, dir, layout.ClusterDir(plat, cluster)))
	if err != nil {
		return nil, err
	}
	out.Files = append(out.Files, File{Path: layout.PreviewFile(plat, cluster, p.PR), Data: k})
	slices.SortFunc(out.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// previewKustomization is the Flux Kustomization that applies pull request
// pr's preview on cluster from the folder fluxPath: in the Flux namespace,
// as the root Kustomization runs (kustomize-controller's own account,
// which the lockdown of docs/cluster.md gives the root), pruning, so that
// deleting it deletes the preview.
func previewKustomization(plat *spec.Platform, cluster string, pr int, fluxPath string) ([]byte, error) {
	env := layout.PreviewEnvironment(pr)
	k := &kustomizev1.Kustomization{
		TypeMeta: metav1.TypeMeta{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization"},
		ObjectMeta: metav1.ObjectMeta{
			Name: layout.PreviewFluxName(pr), Namespace: plat.Fleet.SourceNamespace,
			Labels:      map[string]string{layout.LabelManagedBy: layout.ManagedBy, layout.LabelEnvironment: env},
			Annotations: map[string]string{layout.EventAnnotationPrefix + layout.EventEnvironment: env},
			Finalizers:  fluxFinalizers(),
		},
		Spec: kustomizev1.KustomizationSpec{
			Interval:           metav1.Duration{Duration: 10 * time.Minute},
			RetryInterval:      &metav1.Duration{Duration: time.Minute},
			Path:               fluxPath,
			Prune:              true,
			Timeout:            &metav1.Duration{Duration: 2 * time.Minute},
			ServiceAccountName: PreviewServiceAccount,
			SourceRef:          kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: plat.Fleet.SourceName},
		},
	}
	return encode(k)
}

// PreviewServiceAccount is the account a preview's own Kustomization runs
// as: kustomize-controller's, as the cluster's root Kustomization does
// under Flux's lockdown (docs/cluster.md), so that it applies the preview
// namespaces, their accounts and bindings, as the root applies a
// project's.
const PreviewServiceAccount = "kustomize-controller"

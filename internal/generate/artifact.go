package generate

import (
	"cmp"
	"path"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// ComponentArtifact packs the generated files of one component folder
// (paths relative to the fleet root, all inside dir) as its OCI artifact.
func ComponentArtifact(dir string, files []File) (*artifact.Artifact, error) {
	return componentArtifact(dir, dir, files)
}

// componentArtifact packs the files of the component folder dir as the
// artifact of the fleet folder title (dir, or dir under a preview's
// folder).
func componentArtifact(title, dir string, files []File) (*artifact.Artifact, error) {
	in := make([]artifact.File, len(files))
	for i, f := range files {
		in[i] = artifact.File{Name: strings.TrimPrefix(f.Path, dir+"/"), Data: f.Data}
	}
	return artifact.Build(title, in)
}

// DefaultArtifactInterval is how often source-controller looks at an
// OCIRepository pinned by digest: the look is local (the digest is the
// revision), so it only matters to recover an artifact lost from
// source-controller's storage.
const DefaultArtifactInterval = 10 * time.Minute

// ociRepository is a Flux source in namespace ns pinned to the artifact
// of the fleet folder dir: a component's (named and labelled like its
// Kustomization) or a project's Flux files'. It carries no shard label:
// source-controller is rarely sharded, and when it is, its main instance
// takes unlabelled sources.
func (r *renderer) ociRepository(ns, name string, lbls, annos map[string]string, dir, digest string) *sourcev1.OCIRepository {
	plat := r.opts.Platform
	annos[layout.AnnotationArtifactPath] = path.Join(r.opts.Prefix, dir)
	cfg := plat.Fleet.Artifacts
	interval := DefaultArtifactInterval
	if d, err := time.ParseDuration(cfg.Interval); err == nil && d > 0 {
		interval = d
	}
	o := &sourcev1.OCIRepository{
		TypeMeta: metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.OCIRepositoryKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   ns,
			Labels:      lbls,
			Annotations: annos,
			Finalizers:  fluxFinalizers(),
		},
		Spec: sourcev1.OCIRepositorySpec{
			URL:                "oci://" + cfg.Repository,
			Reference:          &sourcev1.OCIRepositoryRef{Digest: digest},
			Interval:           metav1.Duration{Duration: interval},
			Provider:           cmp.Or(cfg.Provider, sourcev1.GenericOCIProvider),
			ServiceAccountName: cfg.ServiceAccount,
			Insecure:           cfg.Insecure,
		},
	}
	if o.Spec.Provider == sourcev1.GenericOCIProvider {
		o.Spec.Provider = "" // the default, left out
	}
	if cfg.SecretRef != "" {
		o.Spec.SecretRef = &meta.LocalObjectReference{Name: cfg.SecretRef}
	}
	if cfg.CertSecretRef != "" {
		o.Spec.CertSecretRef = &meta.LocalObjectReference{Name: cfg.CertSecretRef}
	}
	return o
}

// Artifacts packs every component folder among the fleet's files (the apps
// generated, not those reused) as its artifact, sorted by folder, followed
// by the projects' artifacts (Fleet.ProjectArtifacts): what a render
// pushes.
func (f *Fleet) Artifacts() ([]*artifact.Artifact, error) {
	var out []*artifact.Artifact
	files := f.Files // sorted by path: a folder's files are together
	for i := 0; i < len(files); {
		// A preview's files are under its folder (f.prefix), laid out
		// inside it as the fleet is.
		rel, ok := strings.CutPrefix(files[i].Path, f.prefix+"/")
		dir := layout.ComponentDirOf(rel)
		if dir == "" || (f.prefix != "" && !ok) {
			i++
			continue
		}
		full := path.Join(f.prefix, dir)
		j := i + 1
		for j < len(files) && strings.HasPrefix(files[j].Path, full+"/") {
			j++
		}
		a, err := componentArtifact(full, full, files[i:j])
		if err != nil {
			return nil, err
		}
		out = append(out, a)
		i = j
	}
	return append(out, f.ProjectArtifacts...), nil
}

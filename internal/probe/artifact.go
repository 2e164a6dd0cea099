package probe

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// IsArtifactRevision reports whether a Flux revision names an OCI artifact
// (source-controller's "sha256:<hex>", or "<tag>@sha256:<hex>") rather than
// a Git commit ("<branch>@sha1:<hex>").
func IsArtifactRevision(rev string) bool {
	return strings.HasPrefix(rev, "sha256:") || strings.Contains(rev, "@sha256:")
}

// ArtifactDigest returns the digest part of an artifact revision:
// "sha256:<hex>" for both "sha256:<hex>" and "<tag>@sha256:<hex>".
func ArtifactDigest(rev string) string {
	if i := strings.LastIndex(rev, "@"); i >= 0 {
		return rev[i+1:]
	}
	return rev
}

// SourceOf returns the key of the OCIRepository a Kustomization reads, and
// false when it reads another kind of source.
func SourceOf(k *kustomizev1.Kustomization) (client.ObjectKey, bool) {
	ref := k.Spec.SourceRef
	if ref.Kind != sourcev1.OCIRepositoryKind {
		return client.ObjectKey{}, false
	}
	return client.ObjectKey{Namespace: cmp.Or(ref.Namespace, k.Namespace), Name: ref.Name}, true
}

// Pinned returns the artifact revision an OCIRepository asks for: its
// spec.ref.digest or, when it is not pinned by digest (a tag or a semver
// range), the revision source-controller last stored ("" when none).
func Pinned(o *sourcev1.OCIRepository) string {
	if o.Spec.Reference != nil && o.Spec.Reference.Digest != "" {
		return o.Spec.Reference.Digest
	}
	if o.Status.Artifact != nil {
		return o.Status.Artifact.Revision
	}
	return ""
}

// Applying returns the revision a Kustomization is applying, when it is
// applying one other than the one it last applied (Ready Unknown,
// lastAttemptedRevision ahead): the objects it applies may then be either
// revision's, while its status still names the older one.
func Applying(k *kustomizev1.Kustomization) (string, bool) {
	ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
	rev := k.Status.LastAttemptedRevision
	if rev == "" || rev == AppliedRevision(k) || ready == nil || ready.Status != metav1.ConditionUnknown {
		return "", false
	}
	return rev, true
}

// sameArtifact reports whether two artifact revisions name the same digest.
func sameArtifact(a, b string) bool {
	return a != "" && b != "" && ArtifactDigest(a) == ArtifactDigest(b)
}

// artifactStatuses judges the Kustomizations that read an OCIRepository
// (see artifactStatus). Their OCIRepositories are read first, then, once
// each, the Kustomizations that apply them: had one started applying
// another revision before an OCIRepository was read, it shows it then (see
// Applying).
func (p *Prober) artifactStatuses(ctx context.Context, ks []*kustomizev1.Kustomization, t Target) []ComponentStatus {
	type source struct {
		o   *sourcev1.OCIRepository
		err error
	}
	sources := make([]source, len(ks))
	for i, k := range ks {
		key, _ := SourceOf(k)
		var o sourcev1.OCIRepository
		if err := p.Client.Get(ctx, key, &o); err != nil {
			sources[i].err = err
			continue
		}
		sources[i].o = &o
	}
	appliers := map[client.ObjectKey]*kustomizev1.Kustomization{}
	out := make([]ComponentStatus, 0, len(ks))
	for i, k := range ks {
		applier, err := p.applierOf(ctx, k, appliers)
		if err == nil && applier != nil {
			appliers[client.ObjectKeyFromObject(applier)] = applier
		}
		out = append(out, artifactStatus(k, sources[i].o, sources[i].err, applier, err, t))
	}
	return out
}

// artifactStatus judges a Kustomization that reads an OCIRepository, o (or
// the error reading it), applied by applier (nil when none is in the
// cluster; or the error reading it). Its revisions are the artifact's
// (sha256:<hex>), never the fleet revision, so the fleet revision is
// judged through the objects its applier (the root Kustomization, reading
// the fleet's Git source) applied: once the applier applied the target
// revision and is not applying another (or, after it moved on, while the
// OCIRepository still pins what t.Artifacts says the target revision
// pinned), the OCIRepository's digest is the target revision's. The
// component is then green when source-controller stored that artifact and
// the Kustomization applied it.
func artifactStatus(k *kustomizev1.Kustomization, o *sourcev1.OCIRepository, oErr error, applier *kustomizev1.Kustomization, applierErr error, t Target) ComponentStatus {
	key, _ := SourceOf(k)
	s := ComponentStatus{
		Component: ComponentOf(k, t.Project, t.App), Kind: kustomizev1.KustomizationKind, Name: k.Name,
		Revision: k.Status.LastAppliedRevision, Source: sourcev1.OCIRepositoryKind + "/" + key.Name,
	}
	oci := fmt.Sprintf("OCIRepository %s", key)
	progressing := func(format string, args ...any) ComponentStatus {
		s.State, s.Message = StateProgressing, fmt.Sprintf(format, args...)
		return s
	}
	conds := k.Status.Conditions
	if apimeta.IsStatusConditionTrue(conds, meta.StalledCondition) {
		s.State = StateFailed
		s.Message = "stalled: " + apimeta.FindStatusCondition(conds, meta.StalledCondition).Message
		return s
	}
	known := t.Artifacts[k.Name]
	applying, busy := "", false
	if applier != nil {
		applying, busy = Applying(applier)
	}
	switch {
	case applierErr != nil:
		return progressing("%v", applierErr)
	case apierrors.IsNotFound(oErr) && known != "" && applier != nil && (busy || !appliedRevision(applier, t.Revision)):
		s.Moved = true
		return progressing("%s is gone: a later fleet revision removed it", oci)
	case apierrors.IsNotFound(oErr):
		return progressing("waiting for %s, which it reads: not found", oci)
	case oErr != nil:
		return progressing("reading %s, which it reads: %v", oci, oErr)
	}
	pin := Pinned(o)
	annotated := true
	switch {
	case applier != nil && appliedRevision(applier, t.Revision) && !busy:
		// The OCIRepository and the Kustomization are the target revision's.
	case known != "" && sameArtifact(pin, known):
		// Their annotations may be a later revision's.
		annotated = applier == nil
		// The applier moved on, and left the component as the target revision pinned it.
	case known != "":
		s.Moved = true
		return progressing("%s pins %s, not %s as %s does: a later fleet revision changed it", oci, orNone(pin), known, t.Revision)
	case busy:
		return progressing("waiting for Kustomization %s/%s, which applies it, to finish applying %s",
			applier.Namespace, applier.Name, applying)
	case applier != nil:
		return progressing("waiting for Kustomization %s/%s, which applies it, to apply %s (it applied %s)",
			applier.Namespace, applier.Name, t.Revision, orNone(applier.Status.LastAppliedRevision))
	}
	// From here on the OCIRepository's spec is the target revision's.
	s.Artifact = pin
	if annotated {
		s.SpecRevision = cmp.Or(k.GetAnnotations()[AnnotationSpecRevision], k.GetAnnotations()[AnnotationFleetSpecRevision])
	}
	if src := sourceWait(o, oci, pin); src != nil {
		s.State, s.Message = src.state, src.message
		return s
	}
	s.State, s.Message = judgeKustomization(k, o.Status.Artifact.Revision, oci)
	return s
}

type verdict struct {
	state   State
	message string
}

// sourceWait tells what holds a component back at its OCIRepository: nil
// once source-controller stored the artifact pin names and is Ready. A
// Stalled OCIRepository fails the component; a pull that fails (the
// artifact missing from the registry, credentials refused) keeps it
// progressing with source-controller's reason, as source-controller keeps
// retrying it, until the app's timeout.
func sourceWait(o *sourcev1.OCIRepository, oci, pin string) *verdict {
	conds := o.Status.Conditions
	ready := apimeta.FindStatusCondition(conds, meta.ReadyCondition)
	stored := o.Status.Artifact != nil && (pin == "" || sameArtifact(o.Status.Artifact.Revision, pin))
	// source-controller keeps the observed generation of the last
	// successful reconcile; a failure is recorded in the conditions, at the
	// generation it was for.
	failedNow := ready != nil && ready.Status == metav1.ConditionFalse && ready.ObservedGeneration == o.Generation
	what := "an artifact"
	if pin != "" {
		what = pin
	}
	switch {
	case o.DeletionTimestamp != nil:
		return &verdict{StateProgressing, oci + " is being deleted"}
	case apimeta.IsStatusConditionTrue(conds, meta.StalledCondition):
		c := apimeta.FindStatusCondition(conds, meta.StalledCondition)
		return &verdict{StateFailed, fmt.Sprintf("%s stalled: %s: %s", oci, c.Reason, c.Message)}
	case failedNow:
		return &verdict{StateProgressing, fmt.Sprintf("source-controller cannot pull %s for %s: %s: %s", what, oci, ready.Reason, ready.Message)}
	case o.Status.ObservedGeneration < o.Generation:
		return &verdict{StateProgressing, fmt.Sprintf("waiting for source-controller to observe the latest spec of %s", oci)}
	case !stored:
		msg := fmt.Sprintf("waiting for source-controller to pull %s for %s", what, oci)
		if ready != nil && ready.Status != metav1.ConditionTrue {
			msg += fmt.Sprintf(" (%s: %s)", ready.Reason, ready.Message)
		}
		return &verdict{StateProgressing, msg}
	case ready == nil || ready.Status != metav1.ConditionTrue:
		msg := fmt.Sprintf("waiting for %s to be Ready", oci)
		if ready != nil {
			msg += fmt.Sprintf(" (%s: %s)", ready.Reason, ready.Message)
		}
		return &verdict{StateProgressing, msg}
	}
	return nil
}

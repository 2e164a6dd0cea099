package probe

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
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
// each, the Kustomizations that apply them and, for a Kustomization that
// applies them from an artifact of its own (a source per project), its
// OCIRepository and the Kustomization that applies those two: had one
// started applying another revision before what it applies was read, it
// shows it then (see Applying).
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
	links := map[client.ObjectKey]*projectLink{}
	out := make([]ComponentStatus, 0, len(ks))
	for i, k := range ks {
		if apierrors.IsNotFound(sources[i].err) && p.deleted(ctx, k) {
			// Flux prunes a component's Kustomization and its
			// OCIRepository together: the source went after the
			// Kustomizations were listed.
			out = append(out, ComponentStatus{
				Component: ComponentOf(k, t.App), Kind: kustomizev1.KustomizationKind, Name: k.Name,
				State: StateGone, Message: "being deleted, with its OCIRepository", Revision: k.Status.LastAppliedRevision,
			})
			continue
		}
		applier, err := p.applierOf(ctx, k, appliers)
		if err == nil && applier != nil {
			appliers[client.ObjectKeyFromObject(applier)] = applier
		}
		var link *projectLink
		if err == nil && applier != nil {
			link = p.linkOf(ctx, applier, appliers, links)
		}
		out = append(out, artifactStatus(k, sources[i].o, sources[i].err, applier, err, link, t))
	}
	return out
}

// deleted reads k again and reports whether it is gone or being deleted.
func (p *Prober) deleted(ctx context.Context, k *kustomizev1.Kustomization) bool {
	var now kustomizev1.Kustomization
	err := p.Client.Get(ctx, client.ObjectKeyFromObject(k), &now)
	return apierrors.IsNotFound(err) || (err == nil && now.DeletionTimestamp != nil)
}

// projectLink is a Kustomization that applies components' Flux objects
// from an artifact (project-<p>, with a source per project): the
// OCIRepository it reads (or the error reading it) and the Kustomization
// that applies those two, the root (nil when none is in the cluster; or
// the error reading it).
type projectLink struct {
	k       *kustomizev1.Kustomization
	o       *sourcev1.OCIRepository
	oErr    error
	root    *kustomizev1.Kustomization
	rootErr error
}

// linkOf returns the projectLink of applier, or nil when applier reads
// another kind of source than an OCIRepository (the root, reading the
// fleet's Git source). links and appliers hold what was read already.
func (p *Prober) linkOf(ctx context.Context, applier *kustomizev1.Kustomization, appliers map[client.ObjectKey]*kustomizev1.Kustomization, links map[client.ObjectKey]*projectLink) *projectLink {
	src, ok := SourceOf(applier)
	if !ok {
		return nil
	}
	key := client.ObjectKeyFromObject(applier)
	if l, ok := links[key]; ok {
		return l
	}
	l := &projectLink{k: applier}
	var o sourcev1.OCIRepository
	if l.oErr = p.Client.Get(ctx, src, &o); l.oErr == nil {
		l.o = &o
	}
	l.root, l.rootErr = p.applierOf(ctx, applier, appliers)
	if l.rootErr == nil && l.root != nil {
		appliers[client.ObjectKeyFromObject(l.root)] = l.root
	}
	links[key] = l
	return l
}

// source names the link's OCIRepository as ComponentStatus.ProjectSource does.
func (l *projectLink) source() string {
	key, _ := SourceOf(l.k)
	return sourcev1.OCIRepositoryKind + "/" + key.Name
}

// wait tells what holds the components the link applies back at the link
// itself: nil once source-controller stored the artifact its OCIRepository
// pins and its Kustomization applied that artifact and is not applying
// another. A failure names the link and carries its own message: the
// project Kustomization's Ready message when it cannot apply the project's
// artifact, source-controller's when it cannot pull it.
func (l *projectLink) wait() *verdict {
	key, _ := SourceOf(l.k)
	oci := "OCIRepository " + key.String()
	kz := fmt.Sprintf("Kustomization %s/%s", l.k.Namespace, l.k.Name)
	switch {
	case l.k.DeletionTimestamp != nil:
		return &verdict{StateProgressing, kz + ", which applies it, is being deleted"}
	case apierrors.IsNotFound(l.oErr):
		return &verdict{StateProgressing, fmt.Sprintf("waiting for %s, which %s reads: not found", oci, kz)}
	case l.oErr != nil:
		return &verdict{StateProgressing, fmt.Sprintf("reading %s, which %s reads: %v", oci, kz, l.oErr)}
	}
	pin := Pinned(l.o)
	applying, busy := Applying(l.k)
	if a := l.o.Status.Artifact; a != nil && !busy && l.o.DeletionTimestamp == nil && sameArtifact(a.Revision, pin) && sameArtifact(AppliedRevision(l.k), pin) {
		// It applied what the revision pins: what befalls it since (a
		// pull or an apply that fails, retried) leaves those objects as
		// they are.
		return nil
	}
	if v := sourceWait(l.o, oci, pin); v != nil {
		return v
	}
	stored := l.o.Status.Artifact.Revision
	if busy {
		return &verdict{StateProgressing, fmt.Sprintf("waiting for %s, which applies it, to finish applying %s", kz, applying)}
	}
	if sameArtifact(AppliedRevision(l.k), stored) {
		return nil
	}
	ready := apimeta.FindStatusCondition(l.k.Status.Conditions, meta.ReadyCondition)
	switch state, msg := judgeKustomization(l.k, stored, oci); {
	case state == StatePassed:
		return nil
	case state == StateFailed:
		return &verdict{StateFailed, fmt.Sprintf("%s, which applies it, failed to apply %s: %s", kz, stored, msg)}
	case ready != nil && ready.Status == metav1.ConditionTrue && l.k.Status.ObservedGeneration >= l.k.Generation:
		return &verdict{StateProgressing, fmt.Sprintf("waiting for %s, which applies it, to apply %s from %s (it applied %s)",
			kz, stored, oci, orNone(l.k.Status.LastAppliedRevision))}
	case ready != nil && ready.Status == metav1.ConditionFalse:
		return &verdict{StateProgressing, fmt.Sprintf("%s, which applies it, cannot apply %s: %s", kz, stored, msg)}
	default:
		return &verdict{StateProgressing, fmt.Sprintf("%s, which applies it: %s", kz, msg)}
	}
}

// artifactStatus judges a Kustomization that reads an OCIRepository, o (or
// the error reading it), applied by applier (nil when none is in the
// cluster; or the error reading it), itself, when it applies k from an
// artifact, a link (see projectLink). Its revisions are the artifact's
// (sha256:<hex>), never the fleet revision, so the fleet revision is
// judged through the objects the root Kustomization (reading the fleet's
// Git source: applier, or the link's root) applied: once the root applied
// the target revision and is not applying another (or, after it moved on,
// while the OCIRepository still pins what t.Artifacts says the target
// revision pinned), the OCIRepository's digest is the target revision's,
// once the link, if any, applied the artifact its OCIRepository pins. The
// component is then green when source-controller stored that artifact and
// the Kustomization applied it.
func artifactStatus(k *kustomizev1.Kustomization, o *sourcev1.OCIRepository, oErr error, applier *kustomizev1.Kustomization, applierErr error, link *projectLink, t Target) ComponentStatus {
	key, _ := SourceOf(k)
	s := ComponentStatus{
		Component: ComponentOf(k, t.App), Kind: kustomizev1.KustomizationKind, Name: k.Name,
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
	// root applies the fleet's Git source: the applier, or the link's.
	root, rootErr := applier, applierErr
	rootApplies := "which applies it"
	if link != nil {
		s.ProjectSource = link.source()
		root, rootErr = link.root, link.rootErr
		rootApplies = fmt.Sprintf("which applies Kustomization %s/%s", link.k.Namespace, link.k.Name)
	}
	known := t.Artifacts[k.Name]
	applying, busy := "", false
	if root != nil {
		applying, busy = Applying(root)
	}
	switch {
	case rootErr != nil:
		return progressing("%v", rootErr)
	case apierrors.IsNotFound(oErr) && known != "" && root != nil && (busy || !appliedRevision(root, t.Revision)):
		s.Moved = true
		return progressing("%s is gone: a later fleet revision removed it", oci)
	case apierrors.IsNotFound(oErr):
		return progressing("waiting for %s, which it reads: not found", oci)
	case oErr != nil:
		return progressing("reading %s, which it reads: %v", oci, oErr)
	}
	pin := Pinned(o)
	annotated := true
	// throughLink: k and o are the target revision's once the link applied
	// what its OCIRepository pins.
	throughLink := true
	switch {
	case root != nil && appliedRevision(root, t.Revision) && !busy:
		// The root's objects are the target revision's: the OCIRepository
		// and the Kustomization, or the link's.
	case known != "" && sameArtifact(pin, known):
		// Their annotations may be a later revision's.
		annotated = root == nil
		throughLink = false
		// The root moved on, and left the component as the target revision pinned it.
	case known != "":
		s.Moved = true
		return progressing("%s pins %s, not %s as %s does: a later fleet revision changed it", oci, orNone(pin), known, t.Revision)
	case busy:
		return progressing("waiting for Kustomization %s/%s, %s, to finish applying %s",
			root.Namespace, root.Name, rootApplies, applying)
	case root != nil:
		return progressing("waiting for Kustomization %s/%s, %s, to apply %s (it applied %s)",
			root.Namespace, root.Name, rootApplies, t.Revision, orNone(root.Status.LastAppliedRevision))
	}
	if link != nil && throughLink {
		if v := link.wait(); v != nil {
			s.State, s.Message = v.state, v.message
			return s
		}
		if root != nil {
			s.ProjectArtifact = Pinned(link.o)
		}
	}
	// From here on the OCIRepository's spec is the target revision's.
	s.Artifact = pin
	if annotated {
		s.SpecRevision = cmp.Or(k.GetAnnotations()[layout.EventAnnotationPrefix+layout.EventSpecRevision], k.GetAnnotations()[layout.AnnotationSpecRevision])
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

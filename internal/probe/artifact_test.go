package probe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	digestOld = "sha256:1d1f0d5c4e0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c"
	digestNew = "sha256:9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b"
)

// ociComponent creates shop/api's component web as render writes it with
// fleet.artifacts: an OCIRepository pinned to digest and a Kustomization
// reading it, both applied by the Kustomization root (owner labels).
func ociComponent(t *testing.T, c client.Client, fluxNS, root, digest string) (*sourcev1.OCIRepository, *kustomizev1.Kustomization) {
	t.Helper()
	labels := map[string]string{layout.LabelApp: "api", layout.LabelProject: "shop", layout.LabelComponent: "web",
		layout.AppliedByNameLabel: root, layout.AppliedByNamespaceLabel: fluxNS}
	annotations := map[string]string{layout.EventAnnotationPrefix + layout.EventApp: "api", layout.EventAnnotationPrefix + layout.EventProject: "shop", layout.EventAnnotationPrefix + layout.EventComponent: "web",
		layout.EventAnnotationPrefix + layout.EventSpecRevision: "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"}
	o := &sourcev1.OCIRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-api-web", Namespace: fluxNS, Labels: labels, Annotations: annotations},
		Spec: sourcev1.OCIRepositorySpec{
			URL: "oci://registry.example.test/fleet", Reference: &sourcev1.OCIRepositoryRef{Digest: digest},
			Interval: metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-api-web", Namespace: fluxNS, Labels: labels, Annotations: annotations},
		Spec: kustomizev1.KustomizationSpec{
			Interval: metav1.Duration{Duration: 10 * time.Minute}, Timeout: &metav1.Duration{Duration: time.Minute},
			Path: "./", Prune: true, Wait: true, TargetNamespace: "shop",
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: "shop-api-web"},
		},
	}
	for _, obj := range []client.Object{o, k} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	return o, k
}

// setOCIStatus writes an OCIRepository's status as source-controller does:
// the artifact it stored (none when stored is ""), the generation of its
// last successful reconcile (current when observed) and its conditions, set
// at the current generation.
func setOCIStatus(t *testing.T, c client.Client, o *sourcev1.OCIRepository, stored string, observed bool, conds ...metav1.Condition) {
	t.Helper()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
		t.Fatal(err)
	}
	for i := range conds {
		conds[i].LastTransitionTime = metav1.Now()
		conds[i].ObservedGeneration = o.Generation
	}
	o.Status.ObservedGeneration = o.Generation
	if !observed {
		o.Status.ObservedGeneration = o.Generation - 1
	}
	o.Status.Artifact = nil
	if stored != "" {
		hex := strings.TrimPrefix(stored, "sha256:")
		path := "ocirepository/" + o.Namespace + "/" + o.Name + "/" + hex + ".tar.gz"
		o.Status.Artifact = &meta.Artifact{
			Path: path, URL: "http://source-controller." + o.Namespace + ".svc.cluster.local./" + path,
			Revision: stored, Digest: "sha256:5e0f6c1d2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5",
			LastUpdateTime: metav1.Now(), Size: ptr.To(int64(1024)),
			Metadata: map[string]string{"org.opencontainers.image.title": "apps/prod/shop/api/web"},
		}
	}
	o.Status.Conditions = conds
	if err := c.Status().Update(t.Context(), o); err != nil {
		t.Fatal(err)
	}
}

// TestSyncOCIRepository checks the sync check of a component that reads
// its own OCIRepository: green once the root applied the fleet revision,
// source-controller stored the pinned artifact and the Kustomization
// applied it; source-controller's failures are named.
func TestSyncOCIRepository(t *testing.T) {
	t.Parallel()
	c := env.Client
	const rev2 = "main@sha1:3333333333333333333333333333333333333333"
	cond := func(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg}
	}
	srcReady := cond(meta.ReadyCondition, metav1.ConditionTrue, meta.SucceededReason, "stored artifact for digest '"+digestNew+"'")
	applied := func(rev string) metav1.Condition {
		return cond(meta.ReadyCondition, metav1.ConditionTrue, meta.ReconciliationSucceededReason, "Applied revision: "+rev)
	}
	pullFailed := "failed to pull artifact from 'oci://registry.example.test/fleet': GET https://registry.example.test/v2/fleet/manifests/" +
		digestNew + ": MANIFEST_UNKNOWN: manifest unknown"
	tests := []struct {
		name string
		root string // the revision the root applied
		// rootApplying: the revision the root is applying (Ready Unknown).
		rootApplying string
		noSpec       bool // no spec revision though the artifact is known
		moved        bool // a later revision changed the component
		artifacts    map[string]string
		noSource     bool
		source       func(t *testing.T, o *sourcev1.OCIRepository)
		app          func(t *testing.T, k *kustomizev1.Kustomization)
		state        State
		msgPart      string
		artifact     string
	}{
		{
			name: "applied", root: rev,
			source: func(t *testing.T, o *sourcev1.OCIRepository) { setOCIStatus(t, c, o, digestNew, true, srcReady) },
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestNew, digestNew, applied(digestNew))
			},
			state: StatePassed, msgPart: "1 Kustomizations ready", artifact: digestNew,
		},
		{
			name: "the root has not applied the revision", root: rev2,
			source: func(t *testing.T, o *sourcev1.OCIRepository) { setOCIStatus(t, c, o, digestNew, true, srcReady) },
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestNew, digestNew, applied(digestNew))
			},
			state: StateProgressing, msgPart: "shop-api-web: waiting for Kustomization %s/fleet, which applies it, to apply " + rev + " (it applied " + rev2 + ")",
		},
		{
			name: "the root is applying the next revision", root: rev, rootApplying: rev2,
			source: func(t *testing.T, o *sourcev1.OCIRepository) { setOCIStatus(t, c, o, digestNew, true, srcReady) },
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestNew, digestNew, applied(digestNew))
			},
			state: StateProgressing, msgPart: "shop-api-web: waiting for Kustomization %s/fleet, which applies it, to finish applying " + rev2,
		},
		{
			name: "the root is applying the next revision, the pin is known", root: rev, rootApplying: rev2, artifacts: map[string]string{"shop-api-web": digestNew},
			source: func(t *testing.T, o *sourcev1.OCIRepository) { setOCIStatus(t, c, o, digestNew, true, srcReady) },
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestNew, digestNew, applied(digestNew))
			},
			state: StatePassed, artifact: digestNew, noSpec: true,
		},
		{
			name: "the root moved on and left the component as it was", root: rev2, artifacts: map[string]string{"shop-api-web": digestNew},
			source: func(t *testing.T, o *sourcev1.OCIRepository) { setOCIStatus(t, c, o, digestNew, true, srcReady) },
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestNew, digestNew, applied(digestNew))
			},
			state: StatePassed, artifact: digestNew,
		},
		{
			name: "a later revision changed the pin", root: rev2, artifacts: map[string]string{"shop-api-web": digestOld},
			source: func(t *testing.T, o *sourcev1.OCIRepository) { setOCIStatus(t, c, o, digestNew, true, srcReady) },
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestNew, digestNew, applied(digestNew))
			},
			state: StateProgressing, msgPart: "OCIRepository %s/shop-api-web pins " + digestNew + ", not " + digestOld + " as " + rev + " does: a later fleet revision changed it",
		},
		{
			name: "source-controller has not observed the new digest", root: rev,
			source: func(t *testing.T, o *sourcev1.OCIRepository) {
				setOCIStatus(t, c, o, digestOld, false, cond(meta.ReadyCondition, metav1.ConditionUnknown, meta.ProgressingReason, "reconciliation in progress"))
			},
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestOld, digestOld, applied(digestOld))
			},
			state: StateProgressing, msgPart: "waiting for source-controller to observe the latest spec of OCIRepository %s/shop-api-web", artifact: digestNew,
		},
		{
			name: "source-controller is pulling", root: rev,
			source: func(t *testing.T, o *sourcev1.OCIRepository) {
				setOCIStatus(t, c, o, digestOld, true, cond(meta.ReadyCondition, metav1.ConditionUnknown, meta.ProgressingReason,
					"building artifact: new revision '"+digestNew+"' for 'registry.example.test/fleet@"+digestNew+"'"))
			},
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestOld, digestOld, applied(digestOld))
			},
			state: StateProgressing, msgPart: "waiting for source-controller to pull " + digestNew + " for OCIRepository %s/shop-api-web (Progressing: building artifact", artifact: digestNew,
		},
		{
			name: "the artifact is missing from the registry", root: rev,
			source: func(t *testing.T, o *sourcev1.OCIRepository) {
				setOCIStatus(t, c, o, digestOld, false,
					cond(meta.ReadyCondition, metav1.ConditionFalse, sourcev1.OCIPullFailedReason, pullFailed),
					cond(sourcev1.FetchFailedCondition, metav1.ConditionTrue, sourcev1.OCIPullFailedReason, pullFailed))
			},
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestOld, digestOld, applied(digestOld))
			},
			state: StateProgressing, msgPart: "source-controller cannot pull " + digestNew + " for OCIRepository %s/shop-api-web: OCIArtifactPullFailed: " + pullFailed, artifact: digestNew,
		},
		{
			name: "the registry refuses the credentials", root: rev,
			source: func(t *testing.T, o *sourcev1.OCIRepository) {
				setOCIStatus(t, c, o, "", false, cond(meta.ReadyCondition, metav1.ConditionFalse, sourcev1.AuthenticationFailedReason,
					"failed to get credential from 'ghcr-pull': secrets \"ghcr-pull\" not found"))
			},
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, "", "", cond(meta.ReadyCondition, metav1.ConditionFalse, meta.ArtifactFailedReason,
					"Source artifact not found, retrying in 30s"))
			},
			state: StateProgressing, msgPart: "source-controller cannot pull " + digestNew + " for OCIRepository %s/shop-api-web: AuthenticationFailed: failed to get credential",
			artifact: digestNew,
		},
		{
			name: "the OCIRepository is stalled", root: rev,
			source: func(t *testing.T, o *sourcev1.OCIRepository) {
				setOCIStatus(t, c, o, "", true,
					cond(meta.ReadyCondition, metav1.ConditionFalse, sourcev1.URLInvalidReason, "URL must be in format 'oci://<domain>/<org>/<repo>'"),
					cond(meta.StalledCondition, metav1.ConditionTrue, sourcev1.URLInvalidReason, "URL must be in format 'oci://<domain>/<org>/<repo>'"))
			},
			app:   func(t *testing.T, k *kustomizev1.Kustomization) {},
			state: StateFailed, msgPart: "OCIRepository %s/shop-api-web stalled: URLInvalid", artifact: digestNew,
		},
		{
			name: "kustomize-controller has not applied the artifact yet", root: rev,
			source: func(t *testing.T, o *sourcev1.OCIRepository) { setOCIStatus(t, c, o, digestNew, true, srcReady) },
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestOld, digestOld, applied(digestOld))
			},
			state: StateProgressing, msgPart: "applied " + digestOld + ", waiting for kustomize-controller to apply " + digestNew + " from OCIRepository %s/shop-api-web",
			artifact: digestNew,
		},
		{
			name: "the health check failed at the artifact", root: rev,
			source: func(t *testing.T, o *sourcev1.OCIRepository) { setOCIStatus(t, c, o, digestNew, true, srcReady) },
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestOld, digestNew, cond(meta.ReadyCondition, metav1.ConditionFalse, meta.HealthCheckFailedReason,
					"health check failed after 1m0s: timeout waiting for: [Deployment/shop/api-web status: 'InProgress']"))
			},
			state: StateFailed, msgPart: "HealthCheckFailed: health check failed after 1m0s", artifact: digestNew,
		},
		{
			name: "the health check failed at the previous artifact", root: rev,
			source: func(t *testing.T, o *sourcev1.OCIRepository) { setOCIStatus(t, c, o, digestNew, true, srcReady) },
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, "", digestOld, cond(meta.ReadyCondition, metav1.ConditionFalse, meta.HealthCheckFailedReason,
					"health check failed after 1m0s"))
			},
			state: StateProgressing, msgPart: "HealthCheckFailed: health check failed after 1m0s", artifact: digestNew,
		},
		{
			name: "a later revision removed the OCIRepository", root: rev2, noSource: true, artifacts: map[string]string{"shop-api-web": digestNew},
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestNew, digestNew, applied(digestNew))
			},
			state: StateProgressing, msgPart: "OCIRepository %s/shop-api-web is gone: a later fleet revision removed it", moved: true,
		},
		{
			name: "the OCIRepository is not there", root: rev, noSource: true,
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, digestOld, digestOld, applied(digestOld))
			},
			state: StateProgressing, msgPart: "waiting for OCIRepository %s/shop-api-web, which it reads: not found",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fluxNS := env.Namespace(t)
			root := rootKustomization(t, c, fluxNS, "fleet")
			if tc.rootApplying != "" {
				setKustomizationStatus(t, c, root, tc.root, tc.rootApplying,
					cond(meta.ReadyCondition, metav1.ConditionUnknown, meta.ProgressingReason, "Reconciliation in progress"))
			} else {
				setKustomizationStatus(t, c, root, tc.root, tc.root, applied(tc.root))
			}
			o, k := ociComponent(t, c, fluxNS, root.Name, digestNew)
			if tc.noSource {
				if err := c.Delete(t.Context(), o); err != nil {
					t.Fatal(err)
				}
			} else {
				tc.source(t, o)
			}
			tc.app(t, k)
			p := &Prober{Client: c}
			chk, timeout := p.Sync(t.Context(), Target{App: layout.AppRef{Project: "shop", Name: "api"}, Revision: rev, FluxNamespace: fluxNS, Artifacts: tc.artifacts})
			msgPart := strings.ReplaceAll(tc.msgPart, "%s", fluxNS)
			if chk.State != tc.state || !strings.Contains(chk.Message, msgPart) {
				t.Errorf("sync = %s %q, want %s containing %q", chk.State, chk.Message, tc.state, msgPart)
			}
			if timeout != time.Minute {
				t.Errorf("timeout = %v, want 1m", timeout)
			}
			if len(chk.Components) != 1 {
				t.Fatalf("components = %+v", chk.Components)
			}
			cs := chk.Components[0]
			if moved := tc.moved || strings.Contains(tc.msgPart, "a later fleet revision changed it"); cs.Moved != moved || chk.MovedOn() != moved {
				t.Errorf("moved = %v, check moved on = %v, want %v", cs.Moved, chk.MovedOn(), moved)
			}
			if cs.Artifact != tc.artifact || cs.Source != "OCIRepository/shop-api-web" {
				t.Errorf("artifact %q source %q, want %q from OCIRepository/shop-api-web", cs.Artifact, cs.Source, tc.artifact)
			}
			wantSpec := ""
			if tc.artifact != "" && tc.root == rev && !tc.noSpec {
				wantSpec = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"
			}
			if cs.SpecRevision != wantSpec {
				t.Errorf("spec revision = %q, want %q", cs.SpecRevision, wantSpec)
			}
		})
	}
}

// staleList is a reader whose Kustomization lists are those of a moment
// ago: what the sync check read before Flux pruned the component between
// its reads.
type staleList struct {
	client.Client
	list kustomizev1.KustomizationList
}

func (s staleList) List(ctx context.Context, l client.ObjectList, opts ...client.ListOption) error {
	if kl, ok := l.(*kustomizev1.KustomizationList); ok {
		var o client.ListOptions
		o.ApplyOptions(opts)
		kl.Items = nil
		for _, k := range s.list.Items {
			if o.Namespace == "" || k.Namespace == o.Namespace {
				kl.Items = append(kl.Items, *k.DeepCopy())
			}
		}
		return nil
	}
	return s.Client.List(ctx, l, opts...)
}

// TestSyncSourcePrunedWithItsKustomization: Flux prunes a component's
// Kustomization and its OCIRepository together; a sync check that listed
// the Kustomization just before, and then finds no OCIRepository, says
// the component is being deleted, not that it waits for its source.
func TestSyncSourcePrunedWithItsKustomization(t *testing.T) {
	t.Parallel()
	c := env.Client
	fluxNS := env.Namespace(t)
	root := rootKustomization(t, c, fluxNS, "fleet")
	setKustomizationStatus(t, c, root, rev, rev, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionTrue,
		Reason: meta.ReconciliationSucceededReason, Message: "Applied revision: " + rev})
	o, k := ociComponent(t, c, fluxNS, root.Name, digestNew)
	var before kustomizev1.KustomizationList
	if err := c.List(t.Context(), &before, client.InNamespace(fluxNS)); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(k), k); err != nil {
		t.Fatal(err)
	}
	k.Finalizers = []string{kustomizev1.KustomizationFinalizer}
	if err := c.Update(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{k, o} {
		if err := c.Delete(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(k), k); err == nil {
			k.Finalizers = nil
			_ = c.Update(context.Background(), k)
		}
	})
	p := &Prober{Client: staleList{Client: c, list: before}}
	chk, _ := p.Sync(t.Context(), Target{App: layout.AppRef{Project: "shop", Name: "api"}, Revision: rev, FluxNamespace: fluxNS})
	if len(chk.Components) != 1 || chk.Components[0].State != StateGone || !strings.Contains(chk.Components[0].Message, "being deleted") {
		t.Errorf("sync = %s %q, components %+v; want the component gone", chk.State, chk.Message, chk.Components)
	}
}

func TestArtifactRevisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rev      string
		artifact bool
		digest   string
	}{
		{digestNew, true, digestNew},
		{"v1.2.0@" + digestNew, true, digestNew},
		{rev, false, rev},
		{"", false, ""},
		{"6.4.1", false, "6.4.1"},
	}
	for _, tc := range tests {
		if got := IsArtifactRevision(tc.rev); got != tc.artifact {
			t.Errorf("IsArtifactRevision(%q) = %v, want %v", tc.rev, got, tc.artifact)
		}
		if tc.artifact {
			if got := ArtifactDigest(tc.rev); got != tc.digest {
				t.Errorf("ArtifactDigest(%q) = %q, want %q", tc.rev, got, tc.digest)
			}
		}
	}
}

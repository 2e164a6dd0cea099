package verify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// The second step of a move to a project's source, merged before Flux has
// applied the first, gives each of the app's Flux objects to the project's
// Kustomization while the root Kustomization still owns it unmarked: the
// root would prune them, and the component Kustomizations' finalizers their
// workloads. verify --kubeconfig says so for each object, and says nothing
// once the objects carry the mark, are the new Kustomization's already,
// or belong to a Kustomization the new one applies or that does not prune.
func TestLiveHandover(t *testing.T) {
	t.Parallel()
	env := testCluster(t)
	ns, fluxNS := env.Namespace(t), env.Namespace(t)
	repo, files := handoverFleet(t, ns, fluxNS)
	applyFleet(t, env, files, "clusters/live/projects/")
	fluxFile := layout.AppFluxFile("live", ns, "web")
	project := "project-" + ns

	// The Kustomization that applied the app's Flux objects before, as
	// flux bootstrap creates it, and another one that project-<ns> (in
	// the project's namespace, as the app's Flux objects) applies.
	kustomization := func(name, namespace string, prune bool, appliedBy string) map[string]any {
		k := map[string]any{
			"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
			"metadata": map[string]any{"name": name, "namespace": namespace},
			"spec": map[string]any{"interval": "10m", "path": "./", "prune": prune,
				"sourceRef": map[string]any{"kind": "GitRepository", "name": "flux-system", "namespace": fluxNS}},
		}
		if appliedBy != "" {
			k["metadata"].(map[string]any)["labels"] = map[string]any{layout.AppliedByNameLabel: appliedBy, layout.AppliedByNamespaceLabel: ns}
		}
		return k
	}
	for _, k := range []map[string]any{kustomization("root", fluxNS, true, ""), kustomization("keeper", fluxNS, false, ""), kustomization("old", ns, true, project)} {
		applyObject(t, env, k)
	}
	ownerNS := map[string]string{"root": fluxNS, "keeper": fluxNS, "gone": fluxNS, "old": ns, project: ns}

	// applyApp applies the app's Flux objects as the Kustomization owner
	// applied them, with the prune mark or not.
	applyApp := func(owner string, marked bool) {
		t.Helper()
		docs, err := yamlx.Parse(files[fluxFile])
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			u := unstructured.Unstructured{Object: objectOf(t, d.Root)}
			l := u.GetLabels()
			if l == nil {
				l = map[string]string{}
			}
			l[layout.AppliedByNameLabel], l[layout.AppliedByNamespaceLabel] = owner, ownerNS[owner]
			u.SetLabels(l)
			a := u.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			if marked {
				a[layout.PruneAnnotation] = layout.PruneDisabled
			} else {
				delete(a, layout.PruneAnnotation)
			}
			u.SetAnnotations(a)
			applyObject(t, env, u.Object)
		}
	}
	handovers := func() []string {
		rep := verifyFleet(t, files, Options{Platform: &repo.Platform, Live: &Live{Config: env.Config}})
		return lines(rep, CheckLiveHandover)
	}

	applyApp("root", false)
	var want []string
	for _, o := range []struct {
		line       int
		kind, name string
	}{{12, "OCIRepository", ns + "-web-api"}, {37, "Kustomization", ns + "-web-api"}} {
		msg := fmt.Sprintf("applied in the cluster by Kustomization %s/root, in this fleet by %s/%s: once Flux has this commit, root prunes it as no longer its own, before or after %s applies it",
			fluxNS, ns, project, project)
		if o.kind == "Kustomization" {
			msg += ", and deletes with it every object it applied"
		}
		msg += "; have Flux apply it marked " + layout.PruneDisabledLine + " first (render writes that step when it moves an app's Flux objects), and merge this once root is Ready at that commit"
		want = append(want, fmt.Sprintf("fleet/%s:%d: %s/%s: metadata.labels: %s", fluxFile, o.line, o.kind, o.name, msg))
	}
	if diff := cmp.Diff(want, handovers()); diff != "" {
		t.Errorf("unmarked objects of the root (-want +got):\n%s", diff)
	}

	for _, c := range []struct {
		owner  string
		marked bool
		why    string
	}{
		{"root", true, "marked: the first step, applied"},
		{project, false, "the project's Kustomization applied them: the move is done"},
		{"old", false, "their Kustomization is applied by the project's, which applies them before it prunes it"},
		{"keeper", false, "their Kustomization does not prune"},
		{"gone", false, "their Kustomization is not in the cluster"},
	} {
		applyApp(c.owner, c.marked)
		if got := handovers(); len(got) > 0 {
			t.Errorf("%s: %s", c.why, strings.Join(got, "\n"))
		}
	}
}

// handoverFleet renders a one-app fleet with a source per project: the
// project is ns, the fleet's GitRepository is in fluxNS.
func handoverFleet(t *testing.T, ns, fluxNS string) (*load.Repo, map[string][]byte) {
	t.Helper()
	return webFleet(t, "clusters: [{name: live}]\nbuild: {pin: false}\nfleet: {source_namespace: "+fluxNS+", artifacts: {repository: ghcr.io/myorg/fleet}}\n", ns)
}

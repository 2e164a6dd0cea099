package generate_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// alertOf returns the Alert among the documents of a project's file.
func alertOf(t *testing.T, data []byte) map[string]any {
	t.Helper()
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if o["kind"] == "Alert" {
			return o
		}
	}
	return nil
}

// TestProjectAlert: with fleet.notifications each project's file holds an
// Alert in the Flux namespace for the Flux objects of the project's
// namespace, naming the Provider; a new project gets its own without an
// edit; without the setting there is none.
func TestProjectAlert(t *testing.T) {
	t.Parallel()
	specs := map[string][]byte{
		"apps/shop/a/app.yaml":    []byte("name: a\ncomponents:\n  - {name: api, type: workload, workload_spec: {image: x/api:1}}\n"),
		"apps/billing/b/app.yaml": []byte("name: b\ncomponents:\n  - {name: api, type: workload, workload_spec: {image: x/api:1}}\n"),
	}
	with := func(platform string) map[string][]byte {
		m := map[string][]byte{"platform.yaml": []byte(platform)}
		for k, v := range specs {
			m[k] = v
		}
		return m
	}
	files := render(t, loadRepo(t, with("apps_domain: apps.test\nclusters: [{name: c}]\nbuild: {pin: false}\nfleet: {notifications: {}}\n"), ""), nil)
	for _, project := range []string{"shop", "billing"} {
		got := alertOf(t, files["clusters/c/projects/"+project+".yaml"])
		want := map[string]any{
			"apiVersion": "notification.toolkit.fluxcd.io/v1beta3",
			"kind":       "Alert",
			"metadata": map[string]any{"name": "fleetwright-" + project, "namespace": "flux-system",
				"labels": map[string]any{"app.kubernetes.io/managed-by": "fleetwright", "fleetwright.io/project": project}},
			"spec": map[string]any{
				"providerRef":   map[string]any{"name": "fleetwright"},
				"eventSeverity": "info",
				"eventSources": []any{
					map[string]any{"kind": "Kustomization", "name": "*", "namespace": project},
					map[string]any{"kind": "HelmRelease", "name": "*", "namespace": project},
					map[string]any{"kind": "OCIRepository", "name": "*", "namespace": project},
				},
			},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s's Alert (-want +got):\n%s", project, diff)
		}
	}
	files = render(t, loadRepo(t, with("apps_domain: apps.test\nclusters: [{name: c}]\nbuild: {pin: false}\nfleet: {notifications: {provider: slack}}\n"), ""), nil)
	if got := alertOf(t, files["clusters/c/projects/shop.yaml"]); got == nil || got["spec"].(map[string]any)["providerRef"].(map[string]any)["name"] != "slack" {
		t.Errorf("Alert with provider slack: %v", got)
	}
	files = render(t, loadRepo(t, with("apps_domain: apps.test\nclusters: [{name: c}]\nbuild: {pin: false}\n"), ""), nil)
	if got := alertOf(t, files["clusters/c/projects/shop.yaml"]); got != nil {
		t.Errorf("an Alert without fleet.notifications: %v", got)
	}
}

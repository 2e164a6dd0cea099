package generate_test

import (
	"strings"
	"testing"
)

// TestJobNameFollowsTemplate: a job renders as one Job whose name changes
// with what it runs (so a change runs it again and the old Job is pruned)
// and not otherwise; the api waits for it through its Flux Kustomization.
func TestJobNameFollowsTemplate(t *testing.T) {
	t.Parallel()
	app := func(image, replicas string) map[string][]byte {
		return map[string][]byte{"apps/shop/store/app.yaml": []byte(`name: store
components:
  - name: migrate
    type: job
    workload_spec: {image: ` + image + `, command: [./migrate]}
  - name: api
    type: workload
    depends_on: [migrate]
    workload_spec: {image: api:1, port: 8080, replicas: ` + replicas + `}
`)}
	}
	jobName := func(files map[string][]byte) string {
		t.Helper()
		var names []string
		for p := range render(t, loadRepo(t, files, ""), nil) {
			if strings.Contains(p, "/migrate/job-") {
				names = append(names, p)
			}
		}
		if len(names) != 1 {
			t.Fatalf("jobs: %q", names)
		}
		return names[0]
	}
	first := jobName(app("migrate:1", "1"))
	if !strings.HasPrefix(first, "apps/default/shop/store/migrate/job-store-migrate-") || len(first) != len("apps/default/shop/store/migrate/job-store-migrate-12345678.yaml") {
		t.Errorf("job file %s", first)
	}
	if again := jobName(app("migrate:1", "3")); again != first {
		t.Errorf("a change elsewhere renamed the job: %s → %s", first, again)
	}
	if changed := jobName(app("migrate:2", "1")); changed == first {
		t.Errorf("a new image kept the job's name %s", first)
	}
	ks := string(render(t, loadRepo(t, app("migrate:1", "1"), ""), nil)["clusters/default/apps/shop-store.yaml"])
	api := ks[strings.Index(ks, "name: shop-store-api\n"):]
	if !strings.Contains(api, "- name: shop-store-migrate\n") || !strings.Contains(ks, "wait: true") {
		t.Errorf("the api does not wait for the job:\n%s", ks)
	}
}

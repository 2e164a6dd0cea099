package review_test

import (
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/review"
)

// A volume with size of one name on two components is two sets of
// claims: the review says so when a change makes it, and not again on a
// later change that leaves it as it was.
func TestSplitClaimsLine(t *testing.T) {
	t.Parallel()
	const app = "apps/social/media/app.yaml"
	spec := `name: media
components:
  - name: web
    type: workload
    workload_spec:
      image: myorg/web:1.0.0
      volumes: [{name: uploads, mount_path: /uploads, size: 5Gi}]
  - name: sidekiq
    type: workload
    workload_spec:
      image: myorg/web:1.0.0
      volumes: [{name: scratch, mount_path: /uploads, size: 5Gi}]
`
	base := map[string][]byte{"platform.yaml": []byte("apps_domain: apps.example.com\n"), app: []byte(spec)}
	head := with(base, app, "name: scratch", "name: uploads")
	later := with(head, app, "myorg/web:1.0.0", "myorg/web:1.0.1")

	_, b := renderFiles(t, base)
	_, h := renderFiles(t, head)
	_, l := renderFiles(t, later)
	want := "app `default/social/media`: StatefulSets `media-sidekiq`, `media-web` each have their own claims named `uploads`"
	c := review.Build(review.Input{Base: b, Head: h})
	if !strings.Contains(strings.Join(c.Danger, "\n"), want) {
		t.Errorf("no line for the split claims:\n%s", strings.Join(c.Danger, "\n"))
	}
	c = review.Build(review.Input{Base: h, Head: l})
	if strings.Contains(strings.Join(c.Danger, "\n"), "own claims named") {
		t.Errorf("the line repeats on a change that does not make it:\n%s", strings.Join(c.Danger, "\n"))
	}
}

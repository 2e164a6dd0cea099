package load_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzWorkloadFields puts arbitrary text into the fields of real
// applications whose checks parse it (a patch, a schedule, an env value
// with $(NAME), paths, a label selector, a time zone): loading never
// panics and every problem is at a position of the spec.
func FuzzWorkloadFields(f *testing.F) {
	f.Add("- {op: add, path: /x, value: 1}", "0 3 * * *", "$(A):$$(B)", "/data", "a=b,c in (d)", "Europe/Berlin", "Deployment")
	f.Add("kind: Deployment\nmetadata: {name: app-api}\n", "@every 1h", "$(", "data/../x", "!x", "Local", "")
	f.Add("{a: [", "*/0 * * * *", "$(X)$(Y", "/", "in (", "/etc/passwd", "Job")
	f.Fuzz(func(t *testing.T, patch, schedule, value, mount, selector, tz, kind string) {
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		doc := `name: app
components:
  - name: api
    type: workload
    workload_spec:
      image: myorg/api:v1
      ports: [{name: http, port: 8080}]
      env:
        - {name: A, value: "1"}
        - {name: V, value: ` + q(value) + `}
      volumes: [{name: data, mount_path: ` + q(mount) + `, empty_dir: {}}]
      files: [{path: ` + q(mount) + `, content: ` + q(value) + `}]
      sidecars: [{name: s, image: "busybox:1.36", volume_mounts: [{name: data, mount_path: ` + q(mount) + `}]}]
      patches:
        - patch: ` + q(patch) + `
        - target: {kind: ` + q(kind) + `, label_selector: ` + q(selector) + `}
          patch: ` + q(patch) + `
  - name: nightly
    type: cronjob
    workload_spec: {image: "myorg/api:v1", schedule: ` + q(schedule) + `, time_zone: ` + q(tz) + `}
`
		files := map[string][]byte{"apps/shop/app/app.yaml": []byte(doc)}
		_, ps := fuzzLoader(t).LoadFiles(files)
		for _, p := range ps {
			if p.File != "apps/shop/app/app.yaml" || p.Line < 1 || p.Column < 1 {
				t.Fatalf("a problem is not at a position of the spec: %v", p)
			}
			if strings.Contains(p.Message, "%!") {
				t.Fatalf("a message is badly formatted: %v", p)
			}
		}
	})
}

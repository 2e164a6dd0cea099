package render_test

import (
	"fmt"
	"strings"
	"testing"
)

// A patch that changes nothing is refused at its line, and a patch that
// changes something beside it is not: the one that names no object of the
// component, the one that sets what is already there, and the strategic
// merge patch of a Service port whose entry kustomize drops (without
// protocol, one of its merge keys; validate names the missing key).
func TestPatchThatChangesNothing(t *testing.T) {
	t.Parallel()
	const head = `name: web
components:
  - name: web
    type: workload
    workload_spec:
      image: nginx:1.27
      port: 80
      patches:
`
	tests := []struct {
		name, patches string
		lines         []int  // of the patches refused
		msg           string // what the refusals say
	}{
		{"works", `        - patch: |
            {kind: Deployment, apiVersion: apps/v1, metadata: {name: web-web}, spec: {minReadySeconds: 5}}
`, nil, ""},
		{"same-value", `        - patch: |
            {kind: Deployment, apiVersion: apps/v1, metadata: {name: web-web}, spec: {minReadySeconds: 5}}
        - target: {kind: Deployment}
          patch: |
            - op: replace
              path: /spec/template/spec/containers/0/image
              value: nginx:1.27
`, []int{12}, "changes nothing"},
		{"no-such-label", `        - target: {kind: Deployment, label_selector: tier=none}
          patch: |
            - op: add
              path: /spec/minReadySeconds
              value: 5
`, []int{10}, "changes nothing"},
		{"port-without-protocol", `        - patch: |
            apiVersion: v1
            kind: Service
            metadata: {name: web-web}
            spec:
              ports: [{port: 80, nodePort: 30080}]
`, []int{9}, "protocol"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ps := validate(t, map[string]string{"apps/shop/web/app.yaml": head + tt.patches,
				"platform.yaml": "build: {pin: false}\npolicy: {require_requests: off, require_probes: off}\n"})
			var got []int
			for _, p := range ps {
				if tt.msg != "" && strings.Contains(p.Message, tt.msg) {
					got = append(got, p.Line)
				} else {
					t.Errorf("unexpected problem: %v", p)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.lines) {
				t.Errorf("refused at lines %v, want %v: %v", got, tt.lines, ps)
			}
		})
	}
}

// Package synth makes synthetic apps repositories for benchmarks: n apps of
// three components each (a postgresql addon, an api with an ingress and
// autoscaling, and a worker wired to both), spread over projects of 50 apps.
package synth

import (
	"fmt"
	"os"
	"path/filepath"
)

// Files returns the spec files of n apps by slash path.
func Files(n int) map[string][]byte {
	files := make(map[string][]byte, n+1)
	files["platform.yaml"] = []byte("apps_domain: apps.bench.test\nclusters: [{name: bench}]\nbuild: {pin: false}\n")
	for i := range n {
		project := fmt.Sprintf("team%03d", i/50)
		app := fmt.Sprintf("app%05d", i)
		files["apps/"+project+"/"+app+"/app.yaml"] = []byte(fmt.Sprintf(`name: %s
timeout: 10m
components:
  - name: db
    type: addon
    addon_spec:
      type: postgresql
      chart: {repo: https://charts.bitnami.com/bitnami, name: postgresql, version: 13.4.4}
      values: {auth: {database: %s, username: %s}}
  - name: api
    type: workload
    depends_on: [db]
    workload_spec:
      image: registry.bench.test/%s/api:v%d
      replicas: 2
      port: 8080
      env:
        - {name: DATABASE_URL, export_ref: {component: db, export_key: connection_string}}
        - {name: APP_ENV, value: production}
      resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 256Mi}}
      autoscaling: {min_replicas: 2, max_replicas: 10, cpu_target: 70}
      health_check: {path: /healthz}
      ingress: {enabled: true}
  - name: worker
    type: workload
    workload_spec:
      image: registry.bench.test/%s/worker:v%d
      env:
        - {name: API_URL, export_ref: {component: api, export_key: url}}
        - {name: DB_PASSWORD, export_ref: {component: db, export_key: password}}
`, app, app, app, app, i%7, app, i%7))
	}
	return files
}

// Write writes the files of n apps under dir.
func Write(dir string, n int) error {
	for p, b := range Files(n) {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

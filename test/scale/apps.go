package scale

import (
	"fmt"
	"strings"
)

// clusterName is the cluster of the synthetic fleet.
const clusterName = "scale"

// Shape is the kind of synthetic app a run deploys.
type Shape string

// The shapes.
const (
	// Chain is three workloads and no addon: api; worker, which reads the
	// api's URL (an export known at render time); cron, which depends_on
	// worker.
	Chain Shape = "chain"
	// Pair is two workloads: api, and cron, which depends_on api: the Flux
	// objects of a chain app whose api and worker shared a Kustomization
	// and a source (two of each), with one Deployment fewer.
	Pair Shape = "pair"
	// Addon is a postgresql addon (the stand-in chart of test/cluster) and
	// an api whose DATABASE_URL reads the chart's Secret.
	Addon Shape = "addon"
)

// specFiles returns the apps repository of n apps of shape: platform.yaml
// and apps/<project>/<app>/app.yaml, 50 apps per project. The app
// changed is given version 2 of its api image, every other app version 1.
// chartRepo is the Helm repository of the addon shape; artifacts, when
// set, is the OCI repository of the components' artifacts
// (platform.yaml fleet.artifacts).
func specFiles(shape Shape, n int, changed int, chartRepo string, shards int, artifacts string) map[string][]byte {
	fleet := "fleet: {path: fleet}\n"
	if artifacts != "" {
		fleet = "fleet: {path: fleet, artifacts: {repository: " + artifacts + ", insecure: true}}\n"
	}
	platform := "apps_domain: apps.scale.test\nclusters:\n  - name: " + clusterName + "\nbuild: {pin: false}\n" + fleet
	if shards > 1 {
		var keys []string
		for i := range shards {
			keys = append(keys, fmt.Sprintf("shard%d", i+1))
		}
		platform = "apps_domain: apps.scale.test\nclusters:\n  - name: " + clusterName + "\n    shards: [" + strings.Join(keys, ", ") + "]\nbuild: {pin: false}\n" + fleet
	}
	files := map[string][]byte{"platform.yaml": []byte(platform)}
	for i := range n {
		project, app := appName(i)
		version := 1
		if i == changed {
			version = 2
		}
		api := fmt.Sprintf(`  - name: api
    type: workload
    workload_spec:
      image: registry.scale.test/%s/api:v%d
      port: 8080
      resources: {requests: {cpu: 10m, memory: 16Mi}}
`, project, version)
		cron := func(after string) string {
			return fmt.Sprintf(`  - name: cron
    type: workload
    depends_on: [%s]
    workload_spec:
      image: registry.scale.test/%s/cron:v1
      resources: {requests: {cpu: 10m, memory: 16Mi}}
`, after, project)
		}
		body := "name: " + app + "\ntimeout: 5m\ncomponents:\n"
		switch shape {
		case Chain:
			body += api + fmt.Sprintf(`  - name: worker
    type: workload
    workload_spec:
      image: registry.scale.test/%s/worker:v1
      resources: {requests: {cpu: 10m, memory: 16Mi}}
      env:
        - {name: API_URL, export_ref: {component: api, export_key: url}}
`, project) + cron("worker")
		case Pair:
			body += api + cron("api")
		case Addon:
			body += fmt.Sprintf(`  - name: db
    type: addon
    addon_spec:
      type: postgresql
      chart: {repo: %[2]q, name: postgresql, version: 13.4.4}
      values: {auth: {database: %[1]s, username: %[1]s}}
`, app, chartRepo) + api + `      env:
        - {name: DATABASE_URL, export_ref: {component: db, export_key: connection_string}}
`
		}
		files["apps/"+project+"/"+app+"/app.yaml"] = []byte(body)
	}
	return files
}

// appName is the project and name of app i.
func appName(i int) (project, app string) {
	return fmt.Sprintf("team%02d", i/50), fmt.Sprintf("app%04d", i)
}

// podsPerApp is how many pods an app of shape runs once deployed.
func podsPerApp(shape Shape) int {
	if shape == Chain {
		return 3
	}
	return 2
}

package review

import (
	"fmt"
	"strings"
	"testing"
)

// envDeployment is the Deployment of shop/api's web component in an
// environment on cluster, with its image and replicas.
func envDeployment(env, image string, replicas int) []byte {
	return fmt.Appendf(nil, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api-web
  namespace: shop
  labels:
    fleetwright.io/app: api
    fleetwright.io/project: shop
    fleetwright.io/component: web
    fleetwright.io/environment: %s
spec:
  replicas: %d
  selector:
    matchLabels:
      app.kubernetes.io/instance: api-web
  template:
    metadata:
      labels:
        app.kubernetes.io/instance: api-web
    spec:
      containers:
        - name: web
          image: %s
          resources:
            requests: {cpu: 100m, memory: 128Mi}
`, env, replicas, image)
}

// envIngress is the Ingress of shop/api's web component with its host.
func envIngress(host string) []byte {
	return fmt.Appendf(nil, `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api-web
  namespace: shop
  labels:
    fleetwright.io/app: api
    fleetwright.io/project: shop
    fleetwright.io/component: web
spec:
  rules:
    - host: %s
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service: {name: api-web, port: {number: 80}}
`, host)
}

// TestEnvironmentsOnTwoClustersAreNotPaired: an app's staging and
// production copies are objects of the same kind, namespace and name on
// two clusters. A change to both (a promotion with what a render of main
// changes in staging) is two changes, each against its own cluster's
// copy: never staging's object against production's.
func TestEnvironmentsOnTwoClustersAreNotPaired(t *testing.T) {
	t.Parallel()
	const (
		stg  = "apps/stage-eu/shop/api/web/"
		prod = "apps/prod-eu/shop/api/web/"
	)
	base := map[string][]byte{
		stg + "deployment-api-web.yaml":  envDeployment("staging", "registry.example.com/shop/api@sha256:"+strings.Repeat("1", 64), 1),
		stg + "ingress-api-web.yaml":     envIngress("api.staging.example.com"),
		prod + "deployment-api-web.yaml": envDeployment("production", "registry.example.com/shop/api@sha256:"+strings.Repeat("0", 64), 4),
		prod + "ingress-api-web.yaml":    envIngress("api.example.com"),
	}
	head := map[string][]byte{
		stg + "deployment-api-web.yaml":  envDeployment("staging", "registry.example.com/shop/api@sha256:"+strings.Repeat("2", 64), 1),
		stg + "ingress-api-web.yaml":     envIngress("api.staging.example.com"),
		prod + "deployment-api-web.yaml": envDeployment("production", "registry.example.com/shop/api@sha256:"+strings.Repeat("1", 64), 4),
		prod + "ingress-api-web.yaml":    envIngress("api.example.com"),
	}
	c := Build(Input{Base: base, Head: head})
	for _, want := range []string{
		"| `stage-eu: shop/api-web (web)` | `registry.example.com/shop/api@sha256:" + strings.Repeat("1", 64) + "` | `registry.example.com/shop/api@sha256:" + strings.Repeat("2", 64) + "` |",
		"| `prod-eu: shop/api-web (web)` | `registry.example.com/shop/api@sha256:" + strings.Repeat("0", 64) + "` | `registry.example.com/shop/api@sha256:" + strings.Repeat("1", 64) + "` |",
	} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("the comment lacks the image row\n%s\n%s", want, c.Body)
		}
	}
	// Neither the replicas nor the hosts change: a comment that paired
	// staging's copy with production's would say they do.
	for _, wrong := range []string{"replicas", "api.staging.example.com", "host"} {
		if strings.Contains(strings.ToLower(strings.Join(c.Danger, "\n")), wrong) {
			t.Errorf("a danger mentions %q:\n%s", wrong, strings.Join(c.Danger, "\n"))
		}
	}
	for _, section := range []string{"### Resources", "Ingress"} {
		if strings.Contains(c.Body, section) {
			t.Errorf("the comment shows %q, which does not change:\n%s", section, c.Body)
		}
	}
}

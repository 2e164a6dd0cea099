// Package generate turns validated app specs into the fleet that Flux
// applies: per component a folder of Kubernetes objects (Deployment, Service,
// Ingress, HorizontalPodAutoscaler for workloads; HelmRepository and
// HelmRelease for addons) with a kustomization.yaml, and per app a file of
// Flux Kustomizations, one per component, ordered by the component graph.
//
// The fleet layout, relative to the fleet root:
//
//	clusters/<cluster>/apps/<project>-<app>.yaml      Flux Kustomizations of the app
//	clusters/<cluster>/projects/<project>.yaml        Flux Kustomization of the project namespace
//	apps/<cluster>/<project>/<app>/<component>/       kustomization.yaml + <kind>-<name>.yaml
//	apps/<cluster>/<project>/_project/                the Namespace
//
// Output is deterministic: the same specs give the same bytes.
package generate

// Package generate turns validated app specs into the fleet that Flux
// applies: per component a folder of Kubernetes objects (Deployment, Service,
// Ingress, HorizontalPodAutoscaler for workloads; HelmRepository and
// HelmRelease for addons) with a kustomization.yaml, and per app a file of
// Flux Kustomizations, one per component, ordered by the component graph.
//
// Where each file goes is package layout's to say.
//
// Output is deterministic: the same specs give the same bytes.
package generate

// Package generate turns validated app specs into the fleet that Flux
// applies: per component a folder of Kubernetes objects with a
// kustomization.yaml (which also carries the component's patches), and per
// app a file of Flux Kustomizations, one per component, ordered by the
// component graph.
//
// A workload is a Deployment, or a StatefulSet (with a headless Service)
// when it has a persistent volume, with its Service, Ingress,
// HorizontalPodAutoscaler, PodDisruptionBudget, ServiceAccount and the
// ConfigMap of its files; a job is a Job named by a hash of what it runs; a
// cronjob a CronJob; an addon a HelmRepository and a HelmRelease. One pod
// template builder (pod.go) serves every workload kind. The project
// Namespace carries the platform's Pod Security labels.
//
// Where each file goes is package layout's to say.
//
// Output is deterministic: the same specs give the same bytes.
package generate

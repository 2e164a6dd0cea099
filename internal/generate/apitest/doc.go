// Package apitest proves on a real kube-apiserver (with Flux's CRDs) that
// every object render writes for the examples and the golden specs is
// accepted by a strict server-side dry-run apply and decodes strictly into
// its Go API type; that the pod of every rendered template is admitted by
// Pod Security Admission in a namespace labelled as render labels it; and
// that components with patches build with kustomize into valid objects.
package apitest

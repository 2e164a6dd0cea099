// Package apitest proves on a real kube-apiserver (with Flux's CRDs) that
// every object render writes for the examples and the golden specs is
// accepted by a strict server-side dry-run apply and decodes strictly into
// its Go API type.
package apitest

// Package crds pins the Flux API modules whose CRDs gen.sh generates. It holds
// no code: the blank imports keep the modules in this module's build list.
package crds

import (
	_ "github.com/fluxcd/helm-controller/api/v2"
	_ "github.com/fluxcd/kustomize-controller/api/v1"
	_ "github.com/fluxcd/source-controller/api/v1"
)

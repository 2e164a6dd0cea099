package testenv

import (
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// NewScheme returns a new scheme with client-go's built-in kinds, the
// apiextensions v1 kinds and Flux's kustomize.toolkit.fluxcd.io/v1,
// source.toolkit.fluxcd.io/v1 and helm.toolkit.fluxcd.io/v2 kinds.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		kustomizev1.AddToScheme,
		sourcev1.AddToScheme,
		helmv2.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("building scheme: %w", err)
		}
	}
	return s, nil
}

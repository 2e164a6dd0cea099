package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/testenv"
)

// loadCRDs reads every CustomResourceDefinition that hack/cluster/build.sh
// copied from the Flux controllers' modules (config/crd/bases/), in a fixed
// order: controller by controller, files sorted by name.
func loadCRDs(clusterBin string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, p := range fluxParts {
		files, err := filepath.Glob(filepath.Join(p.dir(clusterBin), "crds", "*.yaml"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("no CRDs in %s", filepath.Join(p.dir(clusterBin), "crds"))
		}
		for _, f := range files { // Glob sorts
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			crds, err := testenv.DecodeCRDs(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			out = append(out, crds...)
		}
	}
	return out, nil
}

// installCRDs creates the Flux controllers' CRDs and returns them.
func installCRDs(ctx context.Context, c client.Client, clusterBin string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := loadCRDs(clusterBin)
	if err != nil {
		return nil, err
	}
	for _, crd := range crds {
		if err := c.Create(ctx, crd.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating CRD %s: %w", crd.Name, err)
		}
	}
	return crds, nil
}

// established returns nil once every CRD is Established with its names
// accepted.
func established(ctx context.Context, c client.Client, crds []*apiextensionsv1.CustomResourceDefinition) error {
	for _, crd := range crds {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
			return err
		}
		for _, t := range []apiextensionsv1.CustomResourceDefinitionConditionType{apiextensionsv1.Established, apiextensionsv1.NamesAccepted} {
			if !crdCondition(got, t) {
				return fmt.Errorf("CRD %s: %s is not True (conditions %v)", crd.Name, t, got.Status.Conditions)
			}
		}
	}
	return nil
}

func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == t {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

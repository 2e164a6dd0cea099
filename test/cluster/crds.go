package cluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// loadCRDs reads every CustomResourceDefinition that hack/cluster/build.sh
// copied from the Flux controllers' modules (config/crd/bases/), in a fixed
// order: controller by controller, files sorted by name.
func loadCRDs(clusterBin string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, p := range fluxParts() {
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
			crds, err := decodeCRDs(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			out = append(out, crds...)
		}
	}
	return out, nil
}

// decodeCRDs decodes the CustomResourceDefinitions of a multi-document
// YAML stream, skipping empty documents.
func decodeCRDs(data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*apiextensionsv1.CustomResourceDefinition
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(doc, crd); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if crd.Kind == "" && crd.Name == "" {
			continue // comments only
		}
		if crd.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("document %d: kind %q, want CustomResourceDefinition", i, crd.Kind)
		}
		out = append(out, crd)
	}
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

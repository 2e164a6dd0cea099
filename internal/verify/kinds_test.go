package verify

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/fleetwright/fleetwright/internal/testenv"
)

// kinds holds what Flux's CRDs require, for the kinds it covers.
func TestFluxRequiredMatchesCRDs(t *testing.T) {
	t.Parallel()
	crds, err := testenv.FluxCRDs()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]string{ // group/kind → the version verify checks
		"kustomize.toolkit.fluxcd.io/Kustomization": "v1", "helm.toolkit.fluxcd.io/HelmRelease": "v2",
		"source.toolkit.fluxcd.io/HelmRepository": "v1", "source.toolkit.fluxcd.io/GitRepository": "v1",
		"source.toolkit.fluxcd.io/OCIRepository": "v1", "source.toolkit.fluxcd.io/HelmChart": "v1",
		"source.toolkit.fluxcd.io/Bucket": "v1",
	}
	seen := 0
	for _, crd := range crds {
		key := crd.Spec.Group + "/" + crd.Spec.Names.Kind
		version, ok := served[key]
		if !ok {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name != version {
				continue
			}
			seen++
			want := map[string][]string{"": {"spec"}}
			collectRequired(v.Schema.OpenAPIV3Schema, "", want)
			got := map[string][]string{}
			for _, r := range kinds[key].required {
				got[r.at] = r.fields
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s: required fields differ from the CRD (-crd +table):\n%s", key, version, diff)
			}
		}
	}
	if seen != len(served) {
		t.Errorf("found %d of %d kinds in the CRDs", seen, len(served))
	}
	for key := range kinds {
		if _, ok := served[key]; !ok && strings.Contains(key, ".toolkit.fluxcd.io/") {
			t.Errorf("%s: a Flux kind whose CRD is not compared", key)
		}
	}
}

func collectRequired(s *apiextensionsv1.JSONSchemaProps, path string, out map[string][]string) {
	if s == nil {
		return
	}
	if len(s.Required) > 0 && path != "" {
		out[path] = slices.Sorted(slices.Values(s.Required))
	}
	for name, p := range s.Properties {
		if path == "" && name == "status" {
			continue
		}
		collectRequired(&p, joinPath(path, name), out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		collectRequired(s.Items.Schema, path+"[]", out)
	}
}

// The OCIRepository rules use the CRD's own patterns and enums.
func TestOCIRepositoryRulesMatchCRD(t *testing.T) {
	t.Parallel()
	crds, err := testenv.FluxCRDs()
	if err != nil {
		t.Fatal(err)
	}
	var spec *apiextensionsv1.JSONSchemaProps
	for _, crd := range crds {
		if crd.Spec.Group != "source.toolkit.fluxcd.io" || crd.Spec.Names.Kind != "OCIRepository" {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == "v1" {
				s := v.Schema.OpenAPIV3Schema.Properties["spec"]
				spec = &s
			}
		}
	}
	if spec == nil {
		t.Fatal("no OCIRepository v1 in the CRDs")
	}
	enum := func(p apiextensionsv1.JSONSchemaProps) []string {
		var out []string
		for _, v := range p.Enum {
			out = append(out, strings.Trim(string(v.Raw), `"`))
		}
		return out
	}
	got := map[string]any{
		"url": spec.Properties["url"].Pattern, "interval": spec.Properties["interval"].Pattern,
		"timeout": spec.Properties["timeout"].Pattern, "provider": enum(spec.Properties["provider"]),
		"operation": enum(spec.Properties["layerSelector"].Properties["operation"]),
	}
	want := map[string]any{
		"url": ociURLPattern, "interval": ociIntervalPattern, "timeout": ociTimeoutPattern,
		"provider": ociProviders, "operation": ociOperations,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OCIRepository rules differ from the CRD (-rules +crd):\n%s", diff)
	}
}

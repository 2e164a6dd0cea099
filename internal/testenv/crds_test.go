package testenv

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFluxCRDs(t *testing.T) {
	t.Parallel()
	crds, err := FluxCRDs()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				t.Errorf("%s %s has no schema", crd.Name, v.Name)
			}
			if v.Storage {
				got = append(got, crd.Spec.Group+"/"+v.Name+" "+crd.Spec.Names.Kind)
			}
		}
	}
	slices.Sort(got)
	want := []string{
		"helm.toolkit.fluxcd.io/v2 HelmRelease",
		"kustomize.toolkit.fluxcd.io/v1 Kustomization",
		"source.toolkit.fluxcd.io/v1 Bucket",
		"source.toolkit.fluxcd.io/v1 ExternalArtifact",
		"source.toolkit.fluxcd.io/v1 GitRepository",
		"source.toolkit.fluxcd.io/v1 HelmChart",
		"source.toolkit.fluxcd.io/v1 HelmRepository",
		"source.toolkit.fluxcd.io/v1 OCIRepository",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("embedded CRDs (-want +got):\n%s", diff)
	}
}

func TestDecodeCRDs(t *testing.T) {
	t.Parallel()
	const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
`
	tests := []struct {
		name      string
		in        string
		wantNames []string
		wantErr   string
	}{
		{name: "one", in: crd, wantNames: []string{"widgets.example.com"}},
		{name: "header and separators", in: "# generated\n---\n" + crd + "---\n# nothing\n---\n", wantNames: []string{"widgets.example.com"}},
		{name: "two", in: crd + "---\n" + strings.ReplaceAll(crd, "widgets", "gadgets"), wantNames: []string{"widgets.example.com", "gadgets.example.com"}},
		{name: "empty", in: "", wantNames: nil},
		{name: "wrong kind", in: "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n", wantErr: `document 0: error unmarshaling JSON: while decoding JSON: json: unknown field "data"`},
		{name: "not a crd", in: "apiVersion: v1\nkind: ConfigMap\n", wantErr: `kind "ConfigMap"`},
		{name: "unknown field", in: strings.Replace(crd, "scope:", "scopes: x\n  scope:", 1), wantErr: `unknown field "scopes"`},
		{name: "bad yaml", in: "a: [", wantErr: "document 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := DecodeCRDs([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeCRDs() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
			}
			if diff := cmp.Diff(tt.wantNames, names); diff != "" {
				t.Errorf("decoded CRDs (-want +got):\n%s", diff)
			}
		})
	}
}

package testenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// DryRunFieldManager is the field manager named in DryRunApply's requests.
const DryRunFieldManager = "fleetwright-testenv"

// DryRunApply sends every object of a multi-document YAML stream to the API
// server as a server-side apply with dryRun=All and fieldValidation=Strict,
// as `kubectl apply --server-side --dry-run=server --validate=strict` would.
// Nothing is stored. The server checks each object against its schema
// (built-in kinds and the installed CRDs): unknown or duplicate fields,
// wrong types and failed CEL rules are errors.
//
// A namespaced object without a namespace goes to "default". The namespaces
// named must exist (a Namespace in the same stream is not stored, since the
// run is dry). The error joins one error per failing document, each naming
// the document's index, kind, namespace and name.
func (e *Env) DryRunApply(ctx context.Context, manifests []byte) error {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifests)))
	var errs []error
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
		if isEmptyDoc(doc) {
			continue
		}
		if err := e.dryRunApplyDoc(ctx, doc); err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

func (e *Env) dryRunApplyDoc(ctx context.Context, doc []byte) error {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
		return fmt.Errorf("decoding: %w", err)
	}
	gvk := obj.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return errors.New("apiVersion and kind are required")
	}
	name := obj.GetName()
	if name == "" {
		return fmt.Errorf("%s: metadata.name is required", gvk.Kind)
	}
	mapping, err := e.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s %s: %w", gvk.Kind, name, err)
	}
	res := e.Dynamic.Resource(mapping.Resource)
	id := gvk.Kind + " " + name
	opts := metav1.PatchOptions{
		DryRun:          []string{metav1.DryRunAll},
		FieldManager:    DryRunFieldManager,
		FieldValidation: metav1.FieldValidationStrict,
		Force:           new(true),
	}
	// The document goes to the server as written, so that it, not a
	// decoder here, judges duplicate and unknown fields.
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		id = gvk.Kind + " " + ns + "/" + name
		_, err = res.Namespace(ns).Patch(ctx, name, types.ApplyYAMLPatchType, doc, opts)
	} else {
		_, err = res.Patch(ctx, name, types.ApplyYAMLPatchType, doc, opts)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	return nil
}

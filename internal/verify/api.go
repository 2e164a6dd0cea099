package verify

import (
	"encoding/json"
	"fmt"
	"reflect"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	notificationv1 "github.com/fluxcd/notification-controller/api/v1"
	notificationv1beta3 "github.com/fluxcd/notification-controller/api/v1beta3"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// newScheme returns the API types objects are checked against: client-go's
// built-in kinds, CustomResourceDefinitions, and Flux's
// kustomize.toolkit.fluxcd.io/v1, source.toolkit.fluxcd.io/v1,
// helm.toolkit.fluxcd.io/v2 and notification.toolkit.fluxcd.io/v1 and
// v1beta3 kinds (the projects' Alerts render writes, the Receiver).
func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme,
		kustomizev1.AddToScheme, sourcev1.AddToScheme, helmv2.AddToScheme,
		notificationv1.AddToScheme, notificationv1beta3.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("building the API scheme: %w", err)
		}
	}
	return s, nil
}

// checkAPI checks an object against its Go API type, strictly (see
// validateValue), and checks what the type cannot say: required fields and
// a few rules the API server enforces.
func (r *run) checkAPI(o *object) []Finding {
	var out []Finding
	add := func(check Check, sev Severity, field, format string, args ...any) {
		out = append(out, r.finding(o, check, sev, field, fmt.Sprintf(format, args...)))
	}
	if o.apiVersion == "" || o.kind == "" {
		add(CheckAPI, SeverityError, "", "apiVersion and kind are required")
		return out
	}
	if o.name == "" {
		add(CheckAPI, SeverityError, "metadata.name", "required field is missing")
	}
	gvk := gvkOf(o.root)
	t, ok := r.types[gvk]
	if !ok {
		sev := SeverityWarning
		if r.opts.StrictKinds {
			sev = SeverityError
		}
		add(CheckKind, sev, "", "unknown kind %s %s: no API type to check it against", o.apiVersion, o.kind)
		return out
	}
	root := decodable(o)
	var errs []fieldError
	validateValue(root, t, "", &errs)
	for _, e := range errs {
		add(CheckAPI, SeverityError, e.path, "%s", e.msg)
	}
	for _, m := range missingRequired(gvk.Group+"/"+gvk.Kind, root) {
		add(CheckAPI, SeverityError, m.field, "%s", m.msg)
	}
	return out
}

// decodable returns the object as the API server would receive it: a
// SOPS-encrypted object loses its sops metadata, and an encrypted Secret its
// (still encrypted) values, which Flux decrypts before applying.
func decodable(o *object) *node {
	if o.root.Get("sops") == nil {
		return o.root
	}
	out := *o.root
	out.Kids = nil
	for i := 0; i < len(o.root.Kids); i += 2 {
		switch k := o.root.Kids[i].Str; {
		case k == "sops", o.kind == "Secret" && (k == "data" || k == "stringData"):
			continue
		}
		out.Kids = append(out.Kids, o.root.Kids[i], o.root.Kids[i+1])
	}
	return &out
}

func nodeTypeName(n *node) string {
	switch {
	case n.Kind == yamlx.MapNode:
		return "a mapping"
	case n.Kind == yamlx.SeqNode:
		return "a list"
	case n.Tag == yamlx.NullTag:
		return "null"
	case n.Tag == yamlx.BoolTag:
		return "true/false"
	case n.Tag == yamlx.IntTag || n.Tag == yamlx.FloatTag:
		return "a number"
	}
	return "a string"
}

func goTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "a list"
	case reflect.Pointer:
		return goTypeName(t.Elem())
	}
	return t.String()
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

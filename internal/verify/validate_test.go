package verify

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	kjson "sigs.k8s.io/json"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// decoderVerdict decodes an object's JSON as Kubernetes does and returns
// whether it failed and the paths of its unknown fields. After another
// error the decoder lists no unknown fields; unknown is then nil and not
// compared.
func decoderVerdict(t reflect.Type, n *node) (failed bool, unknown []string) {
	obj := reflect.New(t).Interface()
	strict, err := kjson.UnmarshalStrict(yamlx.AppendJSON(nil, n), obj)
	if err != nil {
		return true, nil
	}
	unknown = []string{}
	for _, e := range strict {
		if fe, ok := e.(kjson.FieldError); ok && strings.HasPrefix(e.Error(), "unknown field") {
			unknown = append(unknown, fe.FieldPath())
		}
	}
	slices.Sort(unknown)
	return len(strict) > 0, unknown
}

// agree compares the two verdicts.
func agree(dFailed bool, dUnknown []string, vFailed bool, vUnknown []string) bool {
	return dFailed == vFailed && (dUnknown == nil || slices.Equal(dUnknown, vUnknown) || len(dUnknown) == 0 && len(vUnknown) == 0)
}

func validatorVerdict(t reflect.Type, n *node) (failed bool, unknown []string) {
	var errs []fieldError
	validateValue(n, t, "", &errs)
	for _, e := range errs {
		if e.msg == "unknown field" {
			unknown = append(unknown, e.path)
		}
	}
	slices.Sort(unknown)
	return len(errs) > 0, unknown
}

// mutations returns variants of an object: each scalar replaced by values
// of other types, each mapping given an unknown key, each list replaced by
// a mapping.
func mutations(root *node) []*node {
	replacements := []*node{
		{Kind: yamlx.ScalarNode, Tag: yamlx.StrTag, Str: "text"}, {Kind: yamlx.ScalarNode, Tag: yamlx.IntTag, Str: "7"},
		{Kind: yamlx.ScalarNode, Tag: yamlx.IntTag, Str: "-3000000000"}, {Kind: yamlx.ScalarNode, Tag: yamlx.FloatTag, Str: "1.5"},
		{Kind: yamlx.ScalarNode, Tag: yamlx.BoolTag, Str: "true"}, {Kind: yamlx.ScalarNode, Tag: yamlx.NullTag},
		{Kind: yamlx.MapNode, Kids: []*node{}}, {Kind: yamlx.SeqNode, Kids: []*node{}},
		{Kind: yamlx.ScalarNode, Tag: yamlx.StrTag, Str: "100m"}, {Kind: yamlx.ScalarNode, Tag: yamlx.StrTag, Str: "10x"},
	}
	var out []*node
	var walk func(n *node, replace func(*node) *node)
	walk = func(n *node, replace func(*node) *node) {
		switch n.Kind {
		case yamlx.ScalarNode:
			for _, r := range replacements {
				out = append(out, replace(r))
			}
		case yamlx.MapNode:
			extra := *n
			extra.Kids = append(slices.Clone(n.Kids), &node{Kind: yamlx.ScalarNode, Str: "zzUnknown"}, &node{Kind: yamlx.ScalarNode, Str: "x"})
			out = append(out, replace(&extra))
			out = append(out, replace(&node{Kind: yamlx.SeqNode}))
			for i := 1; i < len(n.Kids); i += 2 {
				walk(n.Kids[i], func(v *node) *node {
					c := *n
					c.Kids = slices.Clone(n.Kids)
					c.Kids[i] = v
					return replace(&c)
				})
			}
		case yamlx.SeqNode:
			out = append(out, replace(&node{Kind: yamlx.MapNode}))
			for i := range n.Kids {
				walk(n.Kids[i], func(v *node) *node {
					c := *n
					c.Kids = slices.Clone(n.Kids)
					c.Kids[i] = v
					return replace(&c)
				})
			}
		}
	}
	walk(root, func(v *node) *node { return v })
	return out
}

// The validator agrees with the decoder Kubernetes uses on every object of
// the rendered examples and on thousands of broken variants of them.
func TestValidateMatchesDecoder(t *testing.T) {
	t.Parallel()
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	types := scheme.AllKnownTypes()
	_, files := exampleFleet(t)
	checked := 0
	for p, data := range files {
		docs, err := yamlx.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if d.Root == nil || isKustomizeConfig(d.Root) {
				continue
			}
			typ := types[gvkOf(d.Root)]
			if typ == nil {
				t.Fatalf("%s: no type for %v", p, gvkOf(d.Root))
			}
			for i, n := range append([]*node{d.Root}, mutations(d.Root)...) {
				checked++
				dFailed, dUnknown := decoderVerdict(typ, n)
				vFailed, vUnknown := validatorVerdict(typ, n)
				if !agree(dFailed, dUnknown, vFailed, vUnknown) {
					var errs []fieldError
					validateValue(n, typ, "", &errs)
					t.Errorf("%s variant %d: decoder failed=%v unknown=%v, validator failed=%v unknown=%v (%v)\n%s",
						p, i, dFailed, dUnknown, vFailed, vUnknown, fmt.Sprint(errs), yamlx.AppendJSON(nil, n))
				}
			}
		}
	}
	if checked < 9000 {
		t.Errorf("only %d objects checked", checked)
	}
}

// ruleObject uses the field rules of encoding/json that the Kubernetes
// types do not: embedded structs (one through a pointer) whose names
// clash, "-,", a named field tagged inline, names that differ in case.
type ruleObject struct {
	ruleInner
	*RuleOther
	Name    string             `json:"name"`
	NAME    string             `json:"Name"`
	Dash    string             `json:"-,"`
	Skip    string             `json:"-"`
	Named   ruleInner          `json:",inline"`
	Size    *resource.Quantity `json:"size"`
	Count   int32              `json:"count"`
	private int
}

type ruleInner struct {
	Shared string
	Only   int    `json:"only"`
	Tagged string `json:"tagged"`
}

type RuleOther struct {
	Shared string
	Tagged string
	Deeper *bool `json:"deeper"`
}

var ruleObjects = []string{
	"Shared: a\nonly: 1\ntagged: t\nTagged: u\ndeeper: true\nname: n\nName: m\n'-': d\nNamed: {only: 2, Shared: x}\nsize: 1Gi\ncount: 3\n",
	"Skip: s\n",
	"ONLY: 3\n",
	"shared: x\n",
	"private: 1\n",
	"ruleInner: {}\n",
	"RuleOther: {}\n",
	"deeper: 1\nonly: x\nsize: 10x\ncount: 3000000000\n",
	"Named: {Tagged: x}\n",
}

// The validator and the decoder agree on the field rules the Kubernetes
// types do not use.
func TestValidateRulesMatchDecoder(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[ruleObject]()
	for _, s := range ruleObjects {
		docs, err := yamlx.Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		n := docs[0].Root
		dFailed, dUnknown := decoderVerdict(typ, n)
		vFailed, vUnknown := validatorVerdict(typ, n)
		if !agree(dFailed, dUnknown, vFailed, vUnknown) {
			t.Errorf("%q: decoder failed=%v unknown=%v, validator failed=%v unknown=%v", s, dFailed, dUnknown, vFailed, vUnknown)
		}
	}
}

// FuzzValidate checks that the validator and the decoder agree on any
// object, for a few kinds and for ruleObject.
func FuzzValidate(f *testing.F) {
	scheme, err := newScheme()
	if err != nil {
		f.Fatal(err)
	}
	types := scheme.AllKnownTypes()
	for _, s := range []string{
		"apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: a\n        resources: {requests: {cpu: 100m}}\n",
		"apiVersion: v1\nkind: Service\nspec:\n  ports:\n  - port: 80\n    targetPort: http\n",
		"apiVersion: v1\nkind: Secret\ndata:\n  a: aGk=\n",
		"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nspec:\n  interval: 5m\n  values: {a: [1, b]}\n",
		"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nspec:\n  timeout: 1h\n  prune: true\n",
	} {
		f.Add([]byte(s))
	}
	for _, s := range ruleObjects {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := yamlx.Parse(data)
		if err != nil {
			return
		}
		for _, d := range docs {
			if d.Root == nil || d.Root.Kind != yamlx.MapNode {
				continue
			}
			for _, typ := range []reflect.Type{types[gvkOf(d.Root)], reflect.TypeFor[ruleObject]()} {
				if typ == nil {
					continue
				}
				dFailed, dUnknown := decoderVerdict(typ, d.Root)
				vFailed, vUnknown := validatorVerdict(typ, d.Root)
				if !agree(dFailed, dUnknown, vFailed, vUnknown) {
					t.Fatalf("%s: decoder failed=%v unknown=%v, validator failed=%v unknown=%v on\n%s", typ, dFailed, dUnknown, vFailed, vUnknown, yamlx.AppendJSON(nil, d.Root))
				}
			}
		}
	})
}

// TestValidateValueMessages: each kind of Go type refuses a value of the
// wrong YAML type or out of its range with its own message and path.
func TestValidateValueMessages(t *testing.T) {
	t.Parallel()
	type sample struct {
		I8  int8              `json:"i8"`
		U16 uint16            `json:"u16"`
		F32 float32           `json:"f32"`
		Bin []byte            `json:"bin"`
		Arr [1]int            `json:"arr"`
		ArX [1]int            `json:"arrx"`
		Map map[int]string    `json:"map"`
		Qty resource.Quantity `json:"qty"`
		Str *string           `json:"str"`
		On  bool              `json:"on"`
		Any fmt.Stringer      `json:"any"`
	}
	docs, err := yamlx.Parse([]byte("i8: 300\nu16: -1\nf32: 1e99\nbin: '%%'\narr: [1, x]\narrx: [y]\nmap: {x: 1, 2: [b]}\nqty: 10x\nstr: 3\non: 'yes'\nany: a\nnope: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	var errs []fieldError
	validateValue(docs[0].Root, reflect.TypeFor[sample](), "", &errs)
	var got []string
	for _, e := range errs {
		got = append(got, e.path+": "+e.msg)
	}
	want := []string{
		"i8: must be an integer that fits int8, not 300",
		"u16: must be an integer that fits uint16, not -1",
		"f32: must be a number that fits float32, not 1e+99",
		"bin: must be base64 data: illegal base64 data at input byte 0",
		"arrx[0]: must be an integer, not a string",
		"map.x: key must be an integer",
		"map.x: must be a string, not a number",
		"map.2: must be a string, not a list",
		"qty: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
		"str: must be a string, not a number",
		"on: must be true or false, not a string",
		"any: cannot be decoded into fmt.Stringer",
		"nope: unknown field",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
}

package tenancy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"sigs.k8s.io/yaml"
)

// fuzzBase is the object the fuzzed patches apply to: a ConfigMap as
// render writes one.
const fuzzBase = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web-web-files","namespace":"shop","labels":{"app.kubernetes.io/name":"web"}},"data":{"config.yaml":"a: 1\n"}}`

// FuzzBudget: whatever a patch's text, the Budget never panics, and a
// JSON 6902 patch it accepts makes no object larger than its Bound when
// kustomize's JSON patch library applies it (so an accepted patch is
// bounded, and a refused one never runs).
func FuzzBudget(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/attacks/*.yaml")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{
		"- {op: add, path: /data/b, value: xyz}",
		"- {op: copy, from: /metadata, path: /data/m}\n- {op: copy, from: /data, path: /metadata/d}",
		"- {op: move, from: /data, path: /a-much-longer-key-than-data}",
		"- {op: replace, path: /data, value: {k: [1, 2.5, true, null]}}",
		"- {op: remove, path: /metadata/labels}\n- {op: test, path: /kind, value: ConfigMap}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-web-files}\ndata: {b: c}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var patch any
		if err := yaml.Unmarshal([]byte(text), &patch); err != nil {
			return
		}
		b := NewBudget(len(fuzzBase))
		if _, msg := b.Add(len(text), patch); msg != "" {
			return
		}
		ops, ok := patch.([]any)
		if !ok {
			return
		}
		raw, err := json.Marshal(ops)
		if err != nil {
			return
		}
		p, err := jsonpatch.DecodePatch(raw)
		if err != nil {
			return
		}
		out, err := p.Apply([]byte(fuzzBase))
		if err != nil {
			return
		}
		if len(out) > b.Bound() {
			t.Fatalf("the patch made %d bytes, over the bound %d:\n%s", len(out), b.Bound(), text)
		}
	})
}

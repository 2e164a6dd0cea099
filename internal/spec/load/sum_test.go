package load

import (
	"reflect"
	"testing"
)

func mustSum(t *testing.T, data string) [32]byte {
	t.Helper()
	d, err := Parse("f.yaml", []byte(data))
	if err != nil {
		t.Fatalf("%q: %v", data, err)
	}
	s, ok := d.Sum()
	if !ok {
		t.Fatalf("%q: no sum", data)
	}
	return s
}

func TestSumSameValueSameSum(t *testing.T) {
	t.Parallel()
	groups := [][]string{
		{
			"name: a\ncomponents:\n  - {name: api, type: workload}\n",
			"components: [{type: workload, name: api}]\nname: a\n",
			`{"name": "a", "components": [{"name": "api", "type": "workload"}]}`,
			"# a comment\nname: 'a'\ncomponents:\n- name: \"api\"\n  type: workload\n",
		},
		{"n: 1\n", "n: 1 # one\n", `{"n": 1}`},
		{"x: [a, b]\n", "x:\n  - a\n  - b\n"},
	}
	for _, g := range groups {
		want := mustSum(t, g[0])
		for _, d := range g[1:] {
			if mustSum(t, d) != want {
				t.Errorf("%q and %q hold the same value but sum differently", g[0], d)
			}
		}
	}
}

func TestSumDifferentValueDifferentSum(t *testing.T) {
	t.Parallel()
	docs := []string{
		"v: 1\n", `v: "1"` + "\n", "v: true\n", `v: "true"` + "\n", "v: null\n", `v: ""` + "\n",
		"v: [a]\n", "v: a\n", "v: {}\n", "v: []\n", "v: [[]]\n", "v: [{}]\n",
		"v: {ab: c}\n", "v: {a: bc}\n", "v: {a: b, c: d}\n", "v: {a: {b: {c: d}}}\n",
		"v: [a, b]\n", "v: [b, a]\n", "v: [ab]\n", "v: 1.5\n", "v: 15\n", "w: 1\n",
	}
	seen := map[[32]byte]string{}
	for _, d := range docs {
		s := mustSum(t, d)
		if other, ok := seen[s]; ok {
			t.Errorf("%q and %q share a sum", other, d)
		}
		seen[s] = d
	}
}

// FuzzSum: two documents have the same sum exactly when they hold the same
// value.
func FuzzSum(f *testing.F) {
	f.Add([]byte("a: 1\n"), []byte(`{"a": 1}`))
	f.Add([]byte("a: [x, y]\n"), []byte("a: [y, x]\n"))
	f.Add([]byte("a: {b: c}\n"), []byte("a: {bc: ''}\n"))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		dx, err := Parse("x.yaml", x)
		if err != nil {
			return
		}
		dy, err := Parse("y.yaml", y)
		if err != nil {
			return
		}
		sx, okx := dx.Sum()
		sy, oky := dy.Sum()
		if !okx || !oky {
			return // deeper than the sum goes: the app is then always generated
		}
		if same := reflect.DeepEqual(dx.Value, dy.Value); same != (sx == sy) {
			t.Fatalf("values equal: %v, sums equal: %v\n%q\n%q", same, sx == sy, x, y)
		}
	})
}

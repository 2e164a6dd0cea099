package load

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/spec"
)

// ruleSpec uses the field rules of encoding/json that the spec types do
// not: embedded structs (one through a pointer) whose names clash, "-,",
// a named field tagged inline, names that differ only in case.
type ruleSpec struct {
	ruleInner
	*ruleOther
	Name  string                `json:"name"`
	NAME  string                `json:"Name"`
	Dash  string                `json:"-,"`
	Skip  string                `json:"-"`
	Named ruleInner             `json:",inline"`
	Nums  []int                 `json:"nums"`
	Any   any                   `json:"any"`
	Map   map[string]*ruleInner `json:"map"`
	Size  *spec.Quantity        `json:"size"`
	Sizes []spec.Quantity       `json:"sizes"`
	Pct   *spec.IntOrPercent    `json:"pct"`
	skip  string
}

type ruleInner struct {
	Shared string
	Only   int    `json:"only"`
	Tagged string `json:"tagged"`
}

type ruleOther struct {
	Shared string
	Tagged string
	Deeper *bool `json:"deeper"`
}

// ruleQuoted has members of the string option.
type ruleQuoted struct {
	N     int      `json:"n,string"`
	S     string   `json:"s,string"`
	B     *bool    `json:"b,string"`
	Inner ruleSpec `json:"inner"`
}

var ruleCases = []string{
	"Shared: a\nonly: 1\ntagged: t\nTagged: u\ndeeper: true\nname: n\nName: m\n'-': d\nSkip: s\nNamed: {only: 2, Shared: x}\n",
	"ONLY: 3\nTAGGED: t\nDEEPER: false\nNAME: z\nnums: [1, x, 2]\nany: {a: [1, 2.5]}\nmap: {k: {only: 4}, j: null}\nsize: 100m\n",
	"deeper: null\nskip: x\nshared: s\nSHARED: t\n",
	"deeper: 1\nonly: x\nsize: 10x\nnums: {a: 1}\n",
	"n: '12'\ns: '\"x\"'\nb: 'true'\ninner: {only: 1, deeper: true}\n",
	"n: 12\ns: x\nb: 'maybe'\n",
	"n: 'x'\ninner: {only: 2}\n",
	"sizes: [1Gi, 2, 0.5, '3', \"\\u00e9\"]\npct: 25%\n",
	"pct: 3\nPct: '4'\nsize: 1Gi\n",
	"NAME: x\nname: y\nsizes: [1Gi]\npct: '7'\nsize: 2\n",
}

func compareRules(t *testing.T, data []byte) {
	t.Helper()
	doc, err := Parse("f.yaml", data)
	if err != nil {
		return
	}
	all := cmp.Exporter(func(reflect.Type) bool { return true })
	var got, want ruleSpec
	decode(doc, &got)
	jsonDecode(doc, &want)
	if diff := cmp.Diff(want, got, all); diff != "" {
		t.Errorf("decode of %q differs from encoding/json (-json +decode):\n%s", data, diff)
	}
	var gotQ, wantQ ruleQuoted
	decode(doc, &gotQ)
	jsonDecode(doc, &wantQ)
	if diff := cmp.Diff(wantQ, gotQ, all); diff != "" {
		t.Errorf("quoted decode of %q differs from encoding/json (-json +decode):\n%s", data, diff)
	}
}

func TestDecodeRulesMatchJSON(t *testing.T) {
	t.Parallel()
	for _, c := range append(append([]string{}, ruleCases...), decodeCases...) {
		compareRules(t, []byte(c))
	}
}

// FuzzDecodeRules checks that decoding into types with embedded structs,
// clashing names and the string option gives what encoding/json gives.
func FuzzDecodeRules(f *testing.F) {
	for _, c := range append(append([]string{}, ruleCases...), decodeCases...) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareRules(t, data)
	})
}

package load

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/synth"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// generalValue parses data the general way: yaml.v3's tree, then the
// converter.
func generalValue(data []byte) (any, error) {
	root, err := parseTree("f.yaml", data)
	if err != nil {
		return nil, err
	}
	c := converter{doc: &Document{File: "f.yaml", root: root}}
	return c.convert(root, nil, Pos{}, 0)
}

// fastCases are documents the fast path must read, each the same as
// yaml.v3 reads it.
var fastCases = []string{
	"a: 1\n",
	"a: b\nc: d\n",
	"# head\na: 1 # trailing\n\n  # indented comment\nb: 'it''s'\n",
	"a:\n  b:\n    c: [1, 2.5, x]\n  d: {e: f, g: [h, {i: j}]}\n",
	"list:\n- a\n- b\nnext: 1\n",
	"list:\n  - name: x\n    v: 1\n  - name: y\n  - [ ]\n",
	"-   name: x\n    type: y\n- z\n",
	"a: \"quoted: yes # no\"\nb: 'single'\n\"key with space\": 3\n",
	"e: ~\nf: null\nh: true\ni: False\nj: yes\nk: 0\nl: -12\nm: +7\nn: 1.50\no: .5\np: -0.25\n",
	"v: 13.4.4\nw: 100m\nx: 128Mi\ny: 10.0.0.1\nz: v1.2\nurl: https://charts.example.com/x?y=1\n",
	"f: {url: https://x.example.com/a, n: 3}\n",
	"a: b#c\nd: e  #f\n",
	"k: -x\nl: a b c\nm: x:y\n",
	"empty_map: {}\nempty_list: []\n",
	"a: [x y, 'z w']\n",
	"a: 9223372036854775807\nb: -9223372036854775808\n",
	"Name: x\nname: y\n",
	"---\na: 1\n",
	"a: \"x\\ty\"\nb: é\n",
}

// slowCases must take the general path (they are valid YAML, or errors
// whose message must be yaml.v3's).
var slowCases = []string{
	"",
	"# only a comment\n",
	"a: 1\n---\nb: 2\n",
	"a: &x 1\nb: *x\n",
	"a: !!str 1\n",
	"a: |\n  text\n",
	"a: >\n  text\n",
	"a: b\n  c\n",
	"a: 'multi\n  line'\n",
	"a: [1,\n  2]\n",
	"a:\nb: 1\n",
	"- a\n-\n- b\n",
	"  indented: doc\n  more: 1\n",
	"a: 1\na: 2\n",
	"<<: {a: 1}\n",
	"a: 0777\n",
	"a: 0x1F\n",
	"a: 1_000\n",
	"a: 1e3\n",
	"a: 2024-01-02\n",
	"a: .inf\n",
	"a: 99999999999999999999\n",
	"a:\tb\n",
	"a: b\r\n",
	"- - a\n",
	"? a\n: b\n",
	"a: b: c\n",
	"a: [b, ]\n",
	"a: {b}\n",
	"a: {b:c}\n",
	"a: [b #c]\n",
	"hello\n",
	"a:\n- b\n  c: d\n",
	"a: 1\n b: 2\n",
	"a: @x\n",
	"\"a\":b\n",
	strings.Repeat("a:\n ", 40) + "x: 1\n",
}

func TestFastParseAgreesWithYAML(t *testing.T) {
	t.Parallel()
	for _, c := range fastCases {
		got, ok := fastParse(yamlx.Fast, []byte(c))
		if !ok {
			t.Errorf("fast path declined a plain document:\n%s", c)
			continue
		}
		want, err := generalValue([]byte(c))
		if err != nil {
			t.Errorf("yaml.v3 refused %q: %v", c, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("fast path differs from yaml.v3 on\n%s(-yaml.v3 +fast):\n%s", c, diff)
		}
	}
}

func TestFastParseDeclines(t *testing.T) {
	t.Parallel()
	for _, c := range slowCases {
		if v, ok := fastParse(yamlx.Fast, []byte(c)); ok {
			t.Errorf("fast path read %q as %#v; it must leave it to yaml.v3", c, v)
		}
	}
}

// The examples and the benchmark's apps are what specs look like; they must
// all take the fast path, or the speed it brings is not real.
func TestFastParseReadsExamples(t *testing.T) {
	t.Parallel()
	var n int
	err := filepath.WalkDir("../../../examples/apps", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		checkFast(t, p, data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Fatalf("only %d example specs found", n)
	}
	for name, data := range synth.Files(20) {
		checkFast(t, name, data)
	}
}

func checkFast(t *testing.T, name string, data []byte) {
	t.Helper()
	got, ok := fastParse(yamlx.Fast, data)
	if !ok {
		t.Errorf("%s: fast path declined it", name)
		return
	}
	want, err := generalValue(data)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: fast path differs from yaml.v3 (-yaml.v3 +fast):\n%s", name, diff)
	}
}

// FuzzFastParse checks that whenever the fast path reads a document, yaml.v3
// reads it too, to the same value.
func FuzzFastParse(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c))
	}
	for _, c := range slowCases {
		f.Add([]byte(c))
	}
	_ = filepath.WalkDir("../../../examples", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
		return nil
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := fastParse(yamlx.Fast, data)
		if !ok {
			return
		}
		want, err := generalValue(data)
		if err != nil {
			t.Fatalf("fast path read %q, yaml.v3 refused it: %v", data, err)
		}
		if !reflect.DeepEqual(want, got) {
			w, _ := json.Marshal(want)
			g, _ := json.Marshal(got)
			t.Fatalf("fast path differs on %q:\nyaml.v3: %s\nfast:    %s", data, w, g)
		}
	})
}

// jsonDecode is how decode used to work, and the behaviour it keeps.
func jsonDecode(doc *Document, v any) {
	b, err := json.Marshal(doc.Value)
	if err != nil {
		return
	}
	_ = json.Unmarshal(b, v)
}

var decodeCases = []string{
	"name: x\ncomponents:\n- name: a\n  type: workload\n  workload_spec: {replicas: 3, port: 80, env: [{name: A, value: b}], resources: {requests: {cpu: 100m, memory: 1}}}\n",
	"name: 3\nparsed: true\ncomponents: {a: 1}\n",
	"Name: X\nname: y\nNAME: z\n",
	"components:\n- workload_spec: {replicas: '3', port: 1.5, autoscaling: {max_replicas: 99999999999}}\n",
	"components:\n- addon_spec: {values: {a: 1, b: [1.5, x, {c: null}], d: 1e3}, chart: {repo: 1}}\n",
	"components:\n- workload_spec: {build: {args: {A: 1, B: x}}, command: [a, 1], ingress: {tls: null}}\n",
	"template: {name: t, parameters: {n: 12, l: [1, 2]}}\n",
	"components: [null, {name: a}]\n",
	"timeout: null\npaused: 1\n",
}

func TestDecodeMatchesJSON(t *testing.T) {
	t.Parallel()
	for _, c := range decodeCases {
		compareDecode(t, []byte(c))
	}
}

func compareDecode(t *testing.T, data []byte) {
	t.Helper()
	doc, err := Parse("f.yaml", data)
	if err != nil {
		return
	}
	var got, want spec.App
	decode(doc, &got)
	jsonDecode(doc, &want)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(spec.Quantity{})); diff != "" {
		t.Errorf("decode of %q differs from encoding/json (-json +decode):\n%s", data, diff)
	}
	var gotP, wantP spec.Platform
	decode(doc, &gotP)
	jsonDecode(doc, &wantP)
	if diff := cmp.Diff(wantP, gotP, cmp.AllowUnexported(spec.Quantity{})); diff != "" {
		t.Errorf("platform decode of %q differs from encoding/json (-json +decode):\n%s", data, diff)
	}
}

// FuzzDecode checks that decoding a parsed document into the spec types
// gives what encoding/json gives from the same value.
func FuzzDecode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	for _, data := range synth.Files(2) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareDecode(t, data)
	})
}

// The generated schemas use only keywords the fast check knows; if a new
// keyword appears, every document would silently take the slow path.
func TestFastSchemaCoversSchemas(t *testing.T) {
	t.Parallel()
	s, err := compileSchemas()
	if err != nil {
		t.Fatal(err)
	}
	if s.fast[s.app] == nil || s.fast[s.platform] == nil {
		t.Fatal("the fast schema check cannot judge the spec schemas")
	}
	for name, data := range synth.Files(20) {
		doc, err := Parse(name, data)
		if err != nil {
			t.Fatal(err)
		}
		sch := s.app
		if name == "platform.yaml" {
			sch = s.platform
		}
		if !s.fast[sch].valid(doc.Value) {
			t.Errorf("%s: the fast check does not find a valid spec valid", name)
		}
	}
}

// FuzzFastSchema checks that a document the fast check finds valid is valid
// for the full validator.
func FuzzFastSchema(f *testing.F) {
	s, err := compileSchemas()
	if err != nil {
		f.Fatal(err)
	}
	for _, data := range synth.Files(3) {
		f.Add(data)
	}
	for _, c := range append(append([]string{}, fastCases...), decodeCases...) {
		f.Add([]byte(c))
	}
	f.Add([]byte("name: a\ncomponents:\n- name: x\n  type: workload\n  workload_spec: {image: x, resources: {requests: {cpu: 0.5, memory: 1e3}, limits: {cpu: -1}}}\n"))
	f.Add([]byte("name: a\ncomponents:\n- name: x\n  type: workload\n  workload_spec: {image: x, port: 70000, replicas: 1.5}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse("f.yaml", data)
		if err != nil {
			return
		}
		for _, sch := range []*jsonschema.Schema{s.app, s.platform} {
			if s.fast[sch].valid(doc.Value) {
				if err := sch.Validate(doc.Value); err != nil {
					t.Fatalf("fast check finds %q valid; the validator says: %v", data, err)
				}
			}
		}
	})
}

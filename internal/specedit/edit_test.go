package specedit_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/specedit"
)

const yamlSpec = `# yaml-language-server: $schema=../../../schema/app.schema.json
# The shop's API.
name: my-api   # keep short
timeout: 15m

components:
  # the database first
  - name: postgres
    type: addon
    addon_spec:
      type: postgresql
      chart: {repo: https://charts.bitnami.com/bitnami, name: postgresql, version: 13.4.4}
  - name: api
    type: workload
    workload_spec:
      image: "myorg/api:1.0"
      replicas: 2   # two is enough
      port: 8000
      autoscaling: {min_replicas: 2, max_replicas: 10}
      command:
        - /bin/api
        - --verbose
      description: >
        a folded
        text
`

const jsonSpec = `{
	"name": "my-api",
	"timeout": "15m",
	"components": [
		{"name": "postgres", "type": "addon", "addon_spec": {"type": "postgresql", "chart": {"repo": "https://charts.bitnami.com/bitnami", "name": "postgresql", "version": "13.4.4"}}},
		{
			"name": "api",
			"type": "workload",
			"workload_spec": {
				"image": "myorg/api:1.0",
				"replicas": 2,
				"autoscaling": {"min_replicas": 2, "max_replicas": 10}
			}
		}
	]
}
`

type op struct {
	path   string
	value  any // nil with del deletes
	del    bool
	after  []string
	change bool
}

func apply(t *testing.T, name, src string, ops []op) string {
	t.Helper()
	d, err := specedit.Parse(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ops {
		p, err := specedit.ParsePath(o.path)
		if err != nil {
			t.Fatal(err)
		}
		var changed bool
		if o.del {
			changed, err = d.Delete(p)
		} else {
			changed, err = d.Set(p, o.value, o.after...)
		}
		if err != nil {
			t.Fatalf("%s: %v", o.path, err)
		}
		if changed != o.change {
			t.Errorf("%s: changed = %v, want %v", o.path, changed, o.change)
		}
	}
	return string(d.Bytes())
}

// changedLines returns the lines of got that differ from src, as a
// minimal line diff: "-old" and "+new" lines in order.
func changedLines(src, got string) []string {
	a, b := strings.Split(src, "\n"), strings.Split(got, "\n")
	// Longest common subsequence of lines.
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i++
			j++
		case i < len(a) && (j == len(b) || dp[i+1][j] >= dp[i][j+1]):
			out = append(out, "-"+a[i])
			i++
		default:
			out = append(out, "+"+b[j])
			j++
		}
	}
	return out
}

func TestEdits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		src  string
		ops  []op
		want []string
	}{
		{
			name: "yaml/set replicas keeps comment",
			file: "app.yaml", src: yamlSpec,
			ops:  []op{{path: "components[api].workload_spec.replicas", value: 5, change: true}},
			want: []string{"-      replicas: 2   # two is enough", "+      replicas: 5   # two is enough"},
		},
		{
			name: "yaml/same value changes nothing",
			file: "app.yaml", src: yamlSpec,
			ops: []op{{path: "components[1].workload_spec.replicas", value: json.Number("2")}},
		},
		{
			name: "yaml/insert paused after timeout",
			file: "app.yaml", src: yamlSpec,
			ops:  []op{{path: "paused", value: true, after: []string{"timeout", "name"}, change: true}},
			want: []string{"+paused: true"},
		},
		{
			name: "yaml/insert at end of nested map after block scalar",
			file: "app.yaml", src: yamlSpec,
			ops:  []op{{path: "components[api].workload_spec.health_check.path", value: "/healthz", change: true}},
			want: []string{"+      health_check:", "+        path: /healthz"},
		},
		{
			name: "yaml/flow map value",
			file: "app.yaml", src: yamlSpec,
			ops:  []op{{path: "components[api].workload_spec.autoscaling.max_replicas", value: 20, change: true}},
			want: []string{"-      autoscaling: {min_replicas: 2, max_replicas: 10}", "+      autoscaling: {min_replicas: 2, max_replicas: 20}"},
		},
		{
			name: "yaml/flow map insert",
			file: "app.yaml", src: yamlSpec,
			ops:  []op{{path: "components[api].workload_spec.autoscaling.cpu_target", value: 70, change: true}},
			want: []string{"-      autoscaling: {min_replicas: 2, max_replicas: 10}", "+      autoscaling: {min_replicas: 2, max_replicas: 10, cpu_target: 70}"},
		},
		{
			name: "yaml/quoted string keeps its quotes",
			file: "app.yaml", src: yamlSpec,
			ops:  []op{{path: "components[api].workload_spec.image", value: "myorg/api:2.0", change: true}},
			want: []string{`-      image: "myorg/api:1.0"`, `+      image: "myorg/api:2.0"`},
		},
		{
			name: "yaml/plain string that needs quotes",
			file: "app.yaml", src: yamlSpec,
			ops:  []op{{path: "timeout", value: "true", change: true}},
			want: []string{"-timeout: 15m", `+timeout: "true"`},
		},
		{
			name: "yaml/delete keeps neighbours",
			file: "app.yaml", src: yamlSpec,
			ops:  []op{{path: "timeout", del: true, change: true}},
			want: []string{"-timeout: 15m"},
		},
		{
			name: "yaml/delete missing changes nothing",
			file: "app.yaml", src: yamlSpec,
			ops: []op{{path: "paused", del: true}},
		},
		{
			name: "yaml/insert then delete restores",
			file: "app.yaml", src: yamlSpec,
			ops: []op{
				{path: "paused", value: true, after: []string{"timeout"}, change: true},
				{path: "paused", del: true, change: true},
			},
		},
		{
			name: "yaml/delete block value with nested lines",
			file: "app.yaml", src: yamlSpec,
			ops:  []op{{path: "components[api].workload_spec.command", del: true, change: true}},
			want: []string{"-      command:", "-        - /bin/api", "-        - --verbose"},
		},
		{
			name: "json/set replicas",
			file: "app.json", src: jsonSpec,
			ops:  []op{{path: "components[api].workload_spec.replicas", value: 4, change: true}},
			want: []string{"-\t\t\t\t\"replicas\": 2,", "+\t\t\t\t\"replicas\": 4,"},
		},
		{
			name: "json/insert paused on its own line",
			file: "app.json", src: jsonSpec,
			ops:  []op{{path: "paused", value: true, after: []string{"timeout", "name"}, change: true}},
			want: []string{"+\t\"paused\": true,"},
		},
		{
			name: "json/insert after last member",
			file: "app.json", src: jsonSpec,
			ops: []op{{path: "components[api].workload_spec.port", value: 8000, change: true}},
			want: []string{
				"-\t\t\t\t\"autoscaling\": {\"min_replicas\": 2, \"max_replicas\": 10}",
				"+\t\t\t\t\"autoscaling\": {\"min_replicas\": 2, \"max_replicas\": 10},",
				"+\t\t\t\t\"port\": 8000",
			},
		},
		{
			name: "json/insert into one-line object",
			file: "app.json", src: jsonSpec,
			ops: []op{{path: "components[api].workload_spec.autoscaling.cpu_target", value: 60, change: true}},
			want: []string{
				"-\t\t\t\t\"autoscaling\": {\"min_replicas\": 2, \"max_replicas\": 10}",
				"+\t\t\t\t\"autoscaling\": {\"min_replicas\": 2, \"max_replicas\": 10, \"cpu_target\": 60}",
			},
		},
		{
			name: "json/insert then delete restores",
			file: "app.json", src: jsonSpec,
			ops: []op{
				{path: "paused", value: true, after: []string{"timeout"}, change: true},
				{path: "paused", del: true, change: true},
			},
		},
		{
			name: "json/delete last member",
			file: "app.json", src: jsonSpec,
			ops: []op{{path: "components[api].workload_spec.autoscaling", del: true, change: true}},
			want: []string{
				"-\t\t\t\t\"replicas\": 2,",
				"-\t\t\t\t\"autoscaling\": {\"min_replicas\": 2, \"max_replicas\": 10}",
				"+\t\t\t\t\"replicas\": 2",
			},
		},
		{
			name: "json/nested insert",
			file: "app.json", src: jsonSpec,
			ops: []op{{path: "components[postgres].addon_spec.values.auth.database", value: "shop", change: true}},
			want: []string{
				`-		{"name": "postgres", "type": "addon", "addon_spec": {"type": "postgresql", "chart": {"repo": "https://charts.bitnami.com/bitnami", "name": "postgresql", "version": "13.4.4"}}},`,
				`+		{"name": "postgres", "type": "addon", "addon_spec": {"type": "postgresql", "chart": {"repo": "https://charts.bitnami.com/bitnami", "name": "postgresql", "version": "13.4.4"}, "values": {"auth": {"database": "shop"}}}},`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := apply(t, tt.file, tt.src, tt.ops)
			if d := cmp.Diff(tt.want, changedLines(tt.src, got)); d != "" {
				t.Errorf("changed lines (-want +got):\n%s\nfile:\n%s", d, got)
			}
			if tt.file == "app.json" && !json.Valid([]byte(got)) {
				t.Errorf("result is not valid JSON:\n%s", got)
			}
		})
	}
}

func TestValueAfterEdit(t *testing.T) {
	t.Parallel()
	d, err := specedit.Parse("app.yaml", []byte(yamlSpec))
	if err != nil {
		t.Fatal(err)
	}
	p := specedit.Path{"components", specedit.ByName("api"), "workload_spec", "description"}
	v, err := d.Value(p)
	if err != nil {
		t.Fatal(err)
	}
	if v != "a folded text\n" {
		t.Errorf("description = %q", v)
	}
	if _, err := d.Set(specedit.Path{"components", specedit.ByName("api"), "workload_spec", "zz"}, "x"); err != nil {
		t.Fatal(err)
	}
	// The new key goes after the folded scalar, not inside it.
	if v, _ := d.Value(p); v != "a folded text\n" {
		t.Errorf("description after insert = %q", v)
	}
	if v, _ := d.Value(specedit.Path{"components", 1, "workload_spec", "zz"}); v != "x" {
		t.Errorf("zz = %v", v)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	const anchored = "base: &b {replicas: 1}\nother: *b\nlist:\n  - a\nempty:\n"
	tests := []struct {
		name, path string
		value      any
		del        bool
		want       string
	}{
		{"alias", "other.replicas", 2, false, "alias"},
		{"anchored", "base.replicas", 2, false, "anchored"},
		{"list item not created", "list[3]", "x", false, "has 1 items"},
		{"map as value", "base", 3, false, "is a map"},
		{"empty container", "empty.x", 1, false, "is empty"},
		{"unknown name", "list[foo]", 1, false, "no item named"},
		{"bad value type", "x", []string{"a"}, false, "cannot write"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := specedit.Parse("a.yaml", []byte(anchored))
			if err != nil {
				t.Fatal(err)
			}
			p, err := specedit.ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Set(p, tt.value)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if string(d.Bytes()) != anchored {
				t.Errorf("a failed edit changed the file:\n%s", d.Bytes())
			}
		})
	}
	d, _ := specedit.Parse("a.yaml", []byte(anchored))
	if _, err := d.Lookup(specedit.Path{"nope"}); !errors.Is(err, specedit.ErrNotFound) {
		t.Errorf("Lookup(nope) = %v, want ErrNotFound", err)
	}
}

func TestParsePath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want specedit.Path
		err  bool
	}{
		{"components[api].workload_spec.image", specedit.Path{"components", specedit.ByName("api"), "workload_spec", "image"}, false},
		{"$.components[1].addon_spec.values['app.kubernetes.io/name']", specedit.Path{"components", 1, "addon_spec", "values", "app.kubernetes.io/name"}, false},
		{`$["a"][0]`, specedit.Path{"a", 0}, false},
		{"a..b", nil, true},
		{"a[", nil, true},
		{"", nil, true},
		{"a[-1]", nil, true},
	}
	for _, tt := range tests {
		got, err := specedit.ParsePath(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("ParsePath(%q) err = %v", tt.in, err)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("ParsePath(%q) (-want +got):\n%s", tt.in, d)
		}
		if err == nil {
			back, err := specedit.ParsePath(got.String())
			if err != nil || cmp.Diff(got, back) != "" {
				t.Errorf("ParsePath(%q).String() = %q does not read back", tt.in, got.String())
			}
		}
	}
}

func TestEntrySpan(t *testing.T) {
	t.Parallel()
	d, err := specedit.Parse("app.yaml", []byte(yamlSpec))
	if err != nil {
		t.Fatal(err)
	}
	s, e, err := d.EntrySpan(specedit.Path{"components"})
	if err != nil {
		t.Fatal(err)
	}
	got := yamlSpec[s:e]
	if !strings.HasPrefix(got, "components:\n") || !strings.HasSuffix(got, "        text\n") {
		t.Errorf("EntrySpan(components) = %q", got)
	}
	s, e, err = d.Span(specedit.Path{"name"})
	if err != nil || yamlSpec[s:e] != "my-api" {
		t.Errorf("Span(name) = %q, %v", yamlSpec[s:e], err)
	}
}

func TestMultibyteColumns(t *testing.T) {
	t.Parallel()
	src := "a: {x: \"héé\", y: 1}\nb: é\n"
	got := apply(t, "a.yaml", src, []op{{path: "a.y", value: 2, change: true}, {path: "b", value: "ü", change: true}})
	if want := "a: {x: \"héé\", y: 2}\nb: ü\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzEdit(f *testing.F) {
	f.Add([]byte(yamlSpec), "components[api].workload_spec.replicas", int64(3), false)
	f.Add([]byte(jsonSpec), "paused", int64(1), false)
	f.Add([]byte(yamlSpec), "timeout", int64(0), true)
	f.Add([]byte("a: |\n  x\n  y\nb: 1\n"), "a", int64(1), false)
	f.Fuzz(func(t *testing.T, data []byte, path string, v int64, del bool) {
		name := "f.yaml"
		if len(data) > 0 && data[0] == '{' {
			name = "f.json"
		}
		d, err := specedit.Parse(name, data)
		if err != nil {
			return
		}
		p, err := specedit.ParsePath(path)
		if err != nil {
			return
		}
		if del {
			_, err = d.Delete(p)
		} else {
			_, err = d.Set(p, v)
		}
		if err != nil {
			if string(d.Bytes()) != string(data) {
				t.Fatalf("a failed edit changed the file")
			}
			return
		}
		// Whatever succeeded must parse again.
		if _, err := specedit.Parse(name, d.Bytes()); err != nil {
			t.Fatalf("edited file does not parse: %v\n%s", err, d.Bytes())
		}
		if !del {
			got, err := d.Value(p)
			if err != nil {
				t.Fatalf("value after Set: %v", err)
			}
			if n, ok := got.(int); !ok || int64(n) != v {
				t.Fatalf("value after Set = %#v, want %d", got, v)
			}
		}
	})
}

package manifest

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMarshalDeployment(t *testing.T) {
	t.Parallel()
	replicas := int32(2)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop", Labels: map[string]string{"app.kubernetes.io/name": "api", "b": "true"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "api", Image: "nginx:1.27", Args: []string{"--x=1", "yes", "8080", "a: b", ""},
				Env: []corev1.EnvVar{{Name: "URL", Value: "postgresql://$(U):$(P)@db:5432/app"}},
			}}}},
		},
	}
	got, err := Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app.kubernetes.io/name: api
    b: "true"
  name: api
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels:
      app: api
  strategy: {}
  template:
    metadata: {}
    spec:
      containers:
      - args:
        - --x=1
        - "yes"
        - "8080"
        - "a: b"
        - ""
        env:
        - name: URL
          value: postgresql://$(U):$(P)@db:5432/app
        image: nginx:1.27
        name: api
        resources: {}
`
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	roundTrip(t, d)
}

func TestHelmValuesKeepNulls(t *testing.T) {
	t.Parallel()
	obj := map[string]any{"spec": map[string]any{"values": map[string]any{"drop": nil, "x": map[string]any{}}}, "metadata": map[string]any{"a": nil}}
	got, err := Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	want := "metadata: {}\nspec:\n  values:\n    drop: null\n    x: {}\n"
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// roundTrip checks that YAML reads back what JSON says.
func roundTrip(t testing.TB, obj any) {
	t.Helper()
	out, err := Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var back any
	if err := yaml.Unmarshal(out, &back); err != nil {
		t.Fatalf("emitted YAML does not parse: %v\n%s", err, out)
	}
	want, _ := generic(obj)
	strip(want)
	wantJSON, _ := json.Marshal(want)
	gotJSON, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	_ = json.Unmarshal(wantJSON, &a)
	_ = json.Unmarshal(gotJSON, &b)
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("round trip differs (-want +got):\n%s\n%s", d, out)
	}
}

func strip(v any) {
	if m, ok := v.(map[string]any); ok {
		delete(m, "status")
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "creationTimestamp")
		}
		dropNulls(m, "")
	}
}

func dropNulls(v any, path string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x == nil && !keepNull(path+"/"+k) {
				delete(v, k)
				continue
			}
			dropNulls(x, path+"/"+k)
		}
	case []any:
		for _, x := range v {
			dropNulls(x, path)
		}
	}
}

func FuzzMarshalRoundTrip(f *testing.F) {
	for _, s := range []string{"yes", "a: b", "- x", "#c", "1e3", "0x1F", ".inf", "~", "null", "é", "a\nb", "\x00", " lead", "trail ", "k:", "$(VAR)", "a #b", "@x", "`x", "!x", "&a", "*a", "%x", "{x}", "[x]", "'q'", "\"q\"", "./x", "..", ".5", "-1", "+1", "True", "NO", "\u2028", "\xff"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, k, v string) {
		obj := map[string]any{"metadata": map[string]any{"labels": map[string]any{k: v}}, "list": []any{v, map[string]any{k: v}, []any{v}}}
		roundTrip(t, obj)
	})
}

func TestPlainSafe(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"256Mi": true, "100m": true, "10m0s": true, "1.5Gi": true, "./fleet/apps": true, "--x=1": true, "nginx:1.27": true,
		"1e3": false, "0x1F": false, "13.4.4": false, "2001-12-14": false, "12e4a": false, "1:20": false, "8080": false,
		"yes": false, "On": false, "": false, "-1": false, ".inf": false, "a: b": false, "a #b": false, "k:": false,
		"@x": false, "*a": false, "&a": false, "!t": false, "%x": false, "'q'": false, "{x}": false, "[x]": false,
	} {
		if got := plainSafe(s); got != want {
			t.Errorf("plainSafe(%q) = %v, want %v", s, got, want)
		}
	}
}

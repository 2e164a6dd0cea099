package manifest

import (
	"bytes"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestGenericMatchesJSON: the reflection encoder gives exactly what
// encoding/json gives, for the kinds render writes.
func TestGenericMatchesJSON(t *testing.T) {
	t.Parallel()
	for _, o := range testObjects() {
		fast, err := toGeneric(reflect.ValueOf(o))
		if err != nil {
			t.Fatal(err)
		}
		slow, err := viaJSON(o)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(slow, fast); d != "" {
			t.Errorf("%T (-json +reflect):\n%s", o, d)
		}
	}
}

func testObjects() []any {
	two, eighty := int32(2), int32(80)
	return []any{
		&appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n", Labels: map[string]string{"x": "y"}, Annotations: map[string]string{}},
			Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "c", Image: "i", Ports: []corev1.ContainerPort{{ContainerPort: 80, Name: "http"}},
					Resources:      corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("1.5Gi")}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}},
					LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}}},
					Env:            []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}}},
				}}}}},
		},
		&autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3, Metrics: []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &eighty}},
		}}}},
		&helmv2.HelmRelease{Spec: helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: time.Minute}, Timeout: &metav1.Duration{Duration: 90 * time.Second},
			Values: &apiextensionsv1.JSON{Raw: []byte(`{"a":{"b":null,"c":[1,2.5,"x"]},"fullnameOverride":"x"}`)}}},
		&kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Prune: true, DependsOn: []meta.DependencyReference{{Name: "d"}},
			KubeConfig: &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "k"}}}},
		&corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}},
		&corev1.Secret{Data: map[string][]byte{"k": []byte("\x00\x01")}},
		&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "n"}},
		&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Command: []string{}, Args: nil}}}},
		rulesObject(), &rules{},
	}
}

// rules uses each of encoding/json's field rules that the Kubernetes types
// do not: clashing embedded names, "-,", the string option, a named field
// tagged inline, a type's own IsZero.
type rules struct {
	ruleA
	*ruleB
	Skip    string          `json:"-"`
	Dash    string          `json:"-,"`
	Count   int             `json:"count,string"`
	Ratio   float64         `json:"ratio,string,omitempty"`
	Flag    *bool           `json:"flag,string"`
	Text    string          `json:"text,string"`
	Dur     metav1.Duration `json:"dur,string"` // encodes itself: not quoted
	Named   ruleA           `json:",inline"`
	When    metav1.Time     `json:"when,omitzero"`
	Empty   []string        `json:"empty,omitempty"`
	private int
}

type ruleA struct {
	Shared string
	Only   string `json:"only"`
	Tagged string `json:"tagged"`
}

type ruleB struct {
	Shared string
	Tagged string
	Deeper string `json:"deeper,omitempty"`
}

func rulesObject() *rules {
	yes := true
	return &rules{
		ruleA: ruleA{Shared: "a", Only: "o", Tagged: "t"},
		ruleB: &ruleB{Shared: "b", Tagged: "u", Deeper: "d"},
		Skip:  "s", Dash: "dash", Count: 42, Ratio: 0.5, Flag: &yes, Text: `<a href="x">`,
		Dur: metav1.Duration{Duration: time.Second}, Named: ruleA{Only: "n"}, private: 1,
		When: metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
	}
}

// FuzzRulesMatchJSON: for any values of a type that uses every field rule,
// the reflection encoder and the direct one agree with encoding/json.
func FuzzRulesMatchJSON(f *testing.F) {
	f.Add("a", "", int64(0), 0.5, true, int64(0))
	f.Add("<&>", "x", int64(-7), 1e21, false, int64(1))
	f.Add("", "\u2028\"", int64(1)<<40, -0.0, true, int64(-1))
	f.Fuzz(func(t *testing.T, s, u string, n int64, x float64, b bool, sec int64) {
		if !utf8.ValidString(s) || !utf8.ValidString(u) {
			t.Skip("encoding/json replaces invalid UTF-8; the encoders keep it")
		}
		o := rulesObject()
		o.ruleA.Shared, o.Only, o.Text, o.Dash = s, u, s, u
		o.ruleB.Shared, o.Named.Tagged = u, s
		o.Count, o.Ratio, o.Flag = int(n), x, &b
		o.When = metav1.Time{Time: time.Unix(sec, 0).UTC()}
		if n%3 == 0 {
			o.ruleB, o.Flag = nil, nil
		}
		if n%2 == 0 {
			o.Empty = []string{s}
		}
		slow, err := viaJSON(o)
		if err != nil {
			t.Skip(err) // NaN and the like: encoding/json refuses them
		}
		fast, err := toGeneric(reflect.ValueOf(o))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(slow, fast); d != "" {
			t.Fatalf("(-json +reflect):\n%s", d)
		}
		var direct, viaGeneric bytes.Buffer
		if err := Append(&direct, o); err != nil {
			t.Fatal(err)
		}
		if err := appendGeneric(&viaGeneric, slow); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(viaGeneric.String(), direct.String()); d != "" {
			t.Fatalf("(-generic +direct):\n%s", d)
		}
	})
}

func BenchmarkMarshalDeployment(b *testing.B) {
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"a": "b", "c": "d"}},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}}}
	for b.Loop() {
		if _, err := Marshal(d); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDirectMatchesGeneric: writing a typed object directly gives the same
// bytes as writing its JSON form.
func TestDirectMatchesGeneric(t *testing.T) {
	t.Parallel()
	for _, o := range testObjects() {
		var direct, viaGeneric bytes.Buffer
		if err := Append(&direct, o); err != nil {
			t.Fatal(err)
		}
		g, err := viaJSON(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := appendGeneric(&viaGeneric, g); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(viaGeneric.String(), direct.String()); d != "" {
			t.Errorf("%T (-generic +direct):\n%s", o, d)
		}
	}
}

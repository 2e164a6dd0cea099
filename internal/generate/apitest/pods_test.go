package apitest

import (
	"context"
	"path"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// TestPodsPassRestrictedPodSecurity creates the real-apps fixture's project
// namespace as rendered (labelled to enforce the restricted Pod Security
// Standard, from platform policy) and sends a pod of every pod template
// rendered there (Deployment, StatefulSet, Job, CronJob; init containers
// and native sidecars included) to the API server as a dry run: Pod
// Security Admission refuses any pod the platform defaults leave
// unhardened, and the API server checks the pod spec as the workload
// controllers will create it.
func TestPodsPassRestrictedPodSecurity(t *testing.T) {
	f := renderDir(t, "../testdata/specs/real-apps")
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := env.Namespace(t)
	var rendered corev1.Namespace
	pods := map[string]corev1.PodTemplateSpec{}
	claims := map[string][]string{} // by file
	for _, file := range f.Files {
		base := path.Base(file.Path)
		switch {
		case strings.HasPrefix(base, "namespace-"), strings.Contains(file.Path, "/projects/"):
			must(t, yaml.Unmarshal(file.Data, &rendered))
		case strings.HasPrefix(base, "deployment-"):
			var o appsv1.Deployment
			must(t, yaml.Unmarshal(file.Data, &o))
			pods[base] = o.Spec.Template
		case strings.HasPrefix(base, "statefulset-"):
			var o appsv1.StatefulSet
			must(t, yaml.Unmarshal(file.Data, &o))
			pods[base] = o.Spec.Template
			for _, c := range o.Spec.VolumeClaimTemplates {
				claims[base] = append(claims[base], c.Name)
			}
		case strings.HasPrefix(base, "job-"):
			var o batchv1.Job
			must(t, yaml.Unmarshal(file.Data, &o))
			pods[base] = o.Spec.Template
		case strings.HasPrefix(base, "cronjob-"):
			var o batchv1.CronJob
			must(t, yaml.Unmarshal(file.Data, &o))
			pods[base] = o.Spec.JobTemplate.Spec.Template
		}
	}
	if rendered.Labels["pod-security.kubernetes.io/enforce"] != "restricted" || len(pods) < 5 {
		t.Fatalf("fixture: namespace labels %v, %d pod templates", rendered.Labels, len(pods))
	}
	nsObj, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	must(t, err)
	nsObj.Labels = rendered.Labels
	_, err = cs.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{})
	must(t, err)

	// What the cluster would hold: the fixture's PriorityClass, and the
	// claims a StatefulSet's controller adds to its pods.
	_, err = cs.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	create := func(name string, tpl corev1.PodTemplateSpec, claims []string) error {
		for _, claim := range claims {
			tpl.Spec.Volumes = append(tpl.Spec.Volumes, corev1.Volume{Name: claim, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim + "-p-0"},
			}})
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: tpl.Labels, Annotations: tpl.Annotations}, Spec: tpl.Spec}
		_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	for file, tpl := range pods {
		if err := create("p", tpl, claims[file]); err != nil {
			t.Errorf("%s: the pod is refused: %v", file, err)
		}
		// The check can fail: the same pod without the platform's
		// hardening is refused.
		bad := *tpl.DeepCopy()
		bad.Spec.SecurityContext = nil
		for i := range bad.Spec.Containers {
			bad.Spec.Containers[i].SecurityContext = nil
		}
		if err := create("bad", bad, claims[file]); err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
			t.Errorf("%s: an unhardened pod was not refused: %v", file, err)
		}
	}
}

// TestPatchedComponentsBuild builds every component folder with
// kustomize, as kustomize-controller does, and dry-runs the result: the
// patches a spec carries apply, and the patched objects are still valid.
func TestPatchedComponentsBuild(t *testing.T) {
	for dir, wants := range map[string][]string{
		"../testdata/specs/real-apps": {"hostAliases:", "- legacy", "externalTrafficPolicy: Local"},
		"../../../examples/real-apps": {"hostAliases:", "- mainframe.internal", "topologySpreadConstraints:"},
	} {
		f := renderDir(t, dir)
		fsys := filesys.MakeFsInMemory()
		var patched []string
		for _, file := range f.Files {
			must(t, fsys.MkdirAll(path.Dir("/"+file.Path)))
			must(t, fsys.WriteFile("/"+file.Path, file.Data))
			if path.Base(file.Path) == "kustomization.yaml" && strings.Contains(string(file.Data), "\npatches:") {
				patched = append(patched, "/"+path.Dir(file.Path))
			}
		}
		if len(patched) != 1 {
			t.Fatalf("%s: patched components %v, want one", dir, patched)
		}
		ensureProjectNamespaces(t, f)
		k := krusty.MakeKustomizer(&krusty.Options{LoadRestrictions: types.LoadRestrictionsNone, PluginConfig: types.DisabledPluginConfig()})
		res, err := k.Run(fsys, patched[0])
		if err != nil {
			t.Fatalf("%s: kustomize build: %v", patched[0], err)
		}
		out, err := res.AsYaml()
		must(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := env.DryRunApply(ctx, out); err != nil {
			t.Errorf("%s: the API server refused the patched objects: %v", patched[0], err)
		}
		cancel()
		for _, want := range wants {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s: the build lacks %q:\n%s", patched[0], want, out)
			}
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

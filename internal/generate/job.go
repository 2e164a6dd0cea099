package generate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetwright/fleetwright/internal/manifest"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// A job component renders as a Job whose name ends in a hash of what it
// runs (its pod template and run settings): a changed job is a new Job,
// which runs, and Flux prunes the old one; an unchanged job keeps its name
// and does not run again. Its Flux Kustomization waits (wait: true), and
// kustomize-controller's health check counts a Job as ready only once it
// has completed, so the components that depend on it are applied after it
// succeeded. A Job gets no ttlSecondsAfterFinished: Flux would apply a
// deleted Job again and run it once more.

// JobName is the name of a job component's Job for a pod template hash.
func JobName(app, component, hash string) string { return app + "-" + component + "-" + hash }

func (r *renderer) job(a *load.LoadedApp, c *spec.Component) ([]object, error) {
	lbls := labels(a, c.Name)
	pt, spec_, err := r.jobSpec(a, c, lbls)
	if err != nil {
		return nil, err
	}
	hash, err := templateHash(spec_)
	if err != nil {
		return nil, err
	}
	name := JobName(a.Spec.Name, c.Name, hash)
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.Project, Labels: lbls},
		Spec:       *spec_,
	}
	return append([]object{{"Job", name, job}}, pt.extra...), nil
}

func (r *renderer) cronJob(a *load.LoadedApp, c *spec.Component) ([]object, error) {
	w := c.WorkloadSpec
	lbls := labels(a, c.Name)
	pt, spec_, err := r.jobSpec(a, c, lbls)
	if err != nil {
		return nil, err
	}
	if w.Schedule == "" {
		return nil, fmt.Errorf("a cronjob needs a schedule")
	}
	name := objectName(a, c.Name)
	cj := &batchv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.Project, Labels: lbls},
		Spec: batchv1.CronJobSpec{
			Schedule:                   w.Schedule,
			ConcurrencyPolicy:          batchv1.ConcurrencyPolicy(w.ConcurrencyPolicy),
			StartingDeadlineSeconds:    w.StartingDeadlineSeconds,
			SuccessfulJobsHistoryLimit: w.SuccessfulJobsHistoryLimit,
			FailedJobsHistoryLimit:     w.FailedJobsHistoryLimit,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec:       *spec_,
			},
		},
	}
	if w.TimeZone != "" {
		cj.Spec.TimeZone = new(w.TimeZone)
	}
	if a.Spec.Paused {
		// A paused app starts no new runs; the schedule stays in the spec.
		cj.Spec.Suspend = new(true)
	}
	return append([]object{{"CronJob", name, cj}}, pt.extra...), nil
}

// jobSpec is the Job spec of a job, or of a cronjob's runs.
func (r *renderer) jobSpec(a *load.LoadedApp, c *spec.Component, lbls map[string]string) (podTemplate, *batchv1.JobSpec, error) {
	w := c.WorkloadSpec
	restart := corev1.RestartPolicyOnFailure
	if w.RestartPolicy == string(corev1.RestartPolicyNever) {
		restart = corev1.RestartPolicyNever
	}
	pt, err := r.pod(a, c, lbls, restart)
	if err != nil {
		return pt, nil, err
	}
	if len(pt.service) > 0 {
		// A job's ports stay on its pod: no Service picks them.
		pt.service = nil
	}
	return pt, &batchv1.JobSpec{
		BackoffLimit:          w.BackoffLimit,
		ActiveDeadlineSeconds: w.ActiveDeadlineSeconds,
		Template:              pt.spec,
	}, nil
}

// templateHash is the first 8 hex digits of the SHA-256 of the Job spec's
// canonical YAML.
func templateHash(s *batchv1.JobSpec) (string, error) {
	b, err := manifest.Marshal(s)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:4]), nil
}

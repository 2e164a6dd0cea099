package validate

import (
	"path"
	"strings"
	"time"
	_ "time/tzdata" // time_zone is checked the same on every machine

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

func (l *checker) checkWorkload(a *load.LoadedApp, c *spec.Component, at load.Path, plat *spec.Platform, ps *load.Problems) {
	w, doc := c.WorkloadSpec, a.Doc
	mode := w.BuildMode
	if mode == "" {
		mode = spec.BuildModeImage
	}
	switch mode {
	case spec.BuildModeImage:
		if w.Image == "" {
			if !doc.Has(at.Child("image")) {
				ps.Add(doc, at, "build_mode image needs image (such as myorg/my-api:v1.2.0)")
			}
		} else {
			checkImage(doc, at.Child("image"), w.Image, plat, ps)
		}
		if w.Build != nil {
			ps.AddKey(doc, at.Child("build"), "build is used only with build_mode dockerfile or buildpack; remove it or set build_mode")
		}
	case spec.BuildModeDockerfile, spec.BuildModeBuildpack:
		if w.Image != "" {
			ps.AddKey(doc, at.Child("image"), "build_mode %s builds the image (it is named after the app); remove image, or use build_mode image", mode)
		}
		if w.Build != nil {
			ctx := w.Build.Context
			if ctx == "" {
				ctx = "."
			}
			if path.IsAbs(ctx) || escapes(path.Join(path.Dir(a.File), ctx)) {
				ps.Add(doc, at.Child("build").Child("context"), "build context %q is outside the apps repository", ctx)
			}
			if df := w.Build.Dockerfile; df != "" && (path.IsAbs(df) || escapes(path.Join(path.Dir(a.File), ctx, df))) {
				ps.Add(doc, at.Child("build").Child("dockerfile"), "Dockerfile %q is outside the apps repository", df)
			}
		}
	}
	ing := w.Ingress
	if ing != nil && ing.Enabled && c.Type == spec.TypeWorkload {
		if !hasExposedTCP(w) && !doc.Has(at.Child("port")) && !doc.Has(at.Child("ports")) {
			ps.Add(doc, at.Child("ingress"), "an ingress needs the workload's port (or an exposed TCP port in ports)")
		} else if !hasExposedTCP(w) && len(w.Ports) > 0 {
			ps.Add(doc, at.Child("ingress"), "an ingress needs an exposed TCP port; every port in ports is UDP, SCTP or expose: false")
		}
		if m := ingressHostProblem(ing.Host); ing.Host != "" && m != "" {
			ps.Add(doc, at.Child("ingress").Child("host"), "%q %s", ing.Host, m)
		}
		if ing.Path != "" && !strings.HasPrefix(ing.Path, "/") {
			ps.Add(doc, at.Child("ingress").Child("path"), "must start with /")
		}
	}
	if as := w.Autoscaling; as != nil && as.MinReplicas > 0 && as.MaxReplicas > 0 && as.MinReplicas > as.MaxReplicas {
		ps.Add(doc, at.Child("autoscaling").Child("min_replicas"), "min_replicas (%d) is greater than max_replicas (%d)", as.MinReplicas, as.MaxReplicas)
	}
	checkResources(w.Resources, doc, at.Child("resources"), true, ps)
	for i, s := range w.ImagePullSecrets {
		if !load.IsSubdomain(s) {
			ps.Add(doc, at.Child("image_pull_secrets").Child(i), "%q is not a valid Secret name", s)
		}
	}
	if hc := w.HealthCheck; hc != nil && c.Type == spec.TypeWorkload {
		if hc.Path != "" && !strings.HasPrefix(hc.Path, "/") {
			ps.Add(doc, at.Child("health_check").Child("path"), "must start with /")
		}
		if hc.Port == 0 && !hasTCP(w) && !doc.Has(at.Child("port")) {
			// The check probes the first exposed TCP port, else the first
			// TCP port (generate's defaultProbePort).
			ps.AddKey(doc, at.Child("health_check"), "a health check needs a TCP port: set health_check.port, or the workload's port, or a TCP port in ports")
		}
	}
	checkWords(doc, at, w.Command, w.Args, ps)
	if len(w.Env) > 0 {
		l.checkEnvList(a, c, w.Env, at.Child("env"), plat, ps)
	}
	l.checkWorkloadFields(a, c, at, plat, ps)
}

// checkImage checks an image reference and the forbid_latest policy.
func checkImage(doc *load.Document, at load.Path, image string, plat *spec.Platform, ps *load.Problems) {
	if _, err := name.ParseReference(image); err != nil {
		ps.Add(doc, at, "%q is not a valid image reference: %v", image, err)
		return
	}
	if UsesLatestTag(image) {
		// verify's forbid_latest on the fleet, applied to the spec: a
		// tag that moves renders a different image each time.
		switch plat.Policy.ForbidLatestSeverity() {
		case spec.SeverityError:
			ps.Add(doc, at, "%s", ForbidLatestMessage(image))
		case spec.SeverityWarning:
			ps.Warn(doc, at, "%s", ForbidLatestMessage(image))
		}
	}
}

// checkKindFields refuses fields that the component's type does not use.
func checkKindFields(doc *load.Document, c *spec.Component, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	isJob := c.Type == spec.TypeJob || c.Type == spec.TypeCronJob
	only := func(set bool, field, msg string) {
		if set {
			ps.AddKey(doc, at.Child(field), "%s", msg)
		}
	}
	if isJob {
		what := "a " + c.Type
		only(w.Ingress != nil, "ingress", what+" runs to completion and takes no ingress; use a workload component")
		only(w.Autoscaling != nil, "autoscaling", what+" takes no autoscaling")
		only(w.Replicas != nil, "replicas", what+" runs one pod at a time and takes no replicas")
		only(w.DisruptionBudget != nil, "disruption_budget", what+"'s pods run to completion and take no disruption_budget")
		only(w.Service != nil, "service", what+" has no Service; use a workload component")
		only(w.HealthCheck != nil, "health_check", what+" takes no health_check; use probes")
		only(w.Strategy != nil, "strategy", what+" runs its pods to completion and takes no strategy")
		only(w.RevisionHistoryLimit != nil, "revision_history_limit", what+" keeps no revisions; use a workload component")
	} else {
		only(w.BackoffLimit != nil, "backoff_limit", "backoff_limit is for job and cronjob components")
		only(w.ActiveDeadlineSeconds != nil, "active_deadline_seconds", "active_deadline_seconds is for job and cronjob components")
		only(w.RestartPolicy != "", "restart_policy", "restart_policy is for job and cronjob components (a workload's pods always restart)")
	}
	if c.Type != spec.TypeCronJob {
		only(w.Schedule != "", "schedule", "schedule is for cronjob components")
		only(w.TimeZone != "", "time_zone", "time_zone is for cronjob components")
		only(w.ConcurrencyPolicy != "", "concurrency_policy", "concurrency_policy is for cronjob components")
		only(w.StartingDeadlineSeconds != nil, "starting_deadline_seconds", "starting_deadline_seconds is for cronjob components")
		only(w.SuccessfulJobsHistoryLimit != nil, "successful_jobs_history_limit", "successful_jobs_history_limit is for cronjob components")
		only(w.FailedJobsHistoryLimit != nil, "failed_jobs_history_limit", "failed_jobs_history_limit is for cronjob components")
		return
	}
	switch {
	case w.Schedule == "" && !doc.Has(at.Child("schedule")):
		ps.Add(doc, at, "a cronjob needs schedule, such as \"0 3 * * *\" (03:00 every day)")
	case w.Schedule != "":
		if m := cronProblem(w.Schedule); m != "" {
			ps.Add(doc, at.Child("schedule"), "%s", m)
		}
	}
	if tz := w.TimeZone; tz != "" {
		if _, err := time.LoadLocation(tz); err != nil || tz == "Local" || strings.HasPrefix(tz, "/") {
			ps.Add(doc, at.Child("time_zone"), "%q is not a time zone of the IANA database, such as Europe/Berlin or UTC", tz)
		}
	}
}

// fieldChecks are the checks of one field or a few of a workload, job or
// cronjob that need nothing but the component: each lives in the file of
// its fields and adds itself here (see docs/contributing.md).
var fieldChecks []func(doc *load.Document, c *spec.Component, w *spec.WorkloadSpec, at load.Path, ps *load.Problems)

// checkWorkloadFields checks the fields of real applications of a
// workload, job or cronjob.
func (l *checker) checkWorkloadFields(a *load.LoadedApp, c *spec.Component, at load.Path, plat *spec.Platform, ps *load.Problems) {
	w, doc := c.WorkloadSpec, a.Doc
	checkKindFields(doc, c, w, at, ps)
	for _, check := range fieldChecks {
		check(doc, c, w, at, ps)
	}
	checkPolicy(a, c, at, plat, ps)
	checkWorkloadPorts(doc, c, w, at, ps)

	checkEnvRefs(doc, w.Env, at, a.Spec.Env, ps)
	if len(w.EnvFrom) > 0 {
		checkEnvFrom(doc, w.EnvFrom, at.Child("env_from"), ps)
	}
	if len(w.Volumes) == 0 && len(w.Files) == 0 && len(w.InitContainers) == 0 && len(w.Sidecars) == 0 &&
		w.SecurityContext == nil && w.Pod == nil && w.DisruptionBudget == nil && len(w.Patches) == 0 && w.ServiceAccount == nil {
		return // none of the rest is set: the common case costs nothing
	}

	volumes := l.checkVolumes(doc, c, w, at, ps)
	checkMounts(doc, w, at, ps)

	names := map[string]load.Path{c.Name: nil}
	for _, kind := range []string{"init_containers", "sidecars"} {
		list := w.InitContainers
		if kind == "sidecars" {
			list = w.Sidecars
		}
		for i := range list {
			l.checkContainer(a, c, &list[i], kind, at.Child(kind).Child(i), names, volumes, plat, ps)
		}
	}
	if w.SecurityContext != nil {
		checkSecurityContext(doc, w.SecurityContext, at.Child("security_context"), ps)
		checkPodSecurity(doc, w.SecurityContext, at.Child("security_context"), podSecurityProfile(plat, a.Project), ps)
	}
	if w.Pod != nil {
		checkPod(doc, w.Pod, at.Child("pod"), ps)
	}
	checkDisruptionBudget(doc, w, at, ps)
	if len(w.Patches) > 0 {
		checkPatches(doc, a, c, w, at.Child("patches"), ps)
	}
	checkServiceAccount(doc, w, at, ps)
}

// checkServiceAccount checks the account the pods run as: a valid name,
// and annotations only on one that is created.
func checkServiceAccount(doc *load.Document, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	if sa := w.ServiceAccount; sa != nil && sa.Name != "" && !load.IsSubdomain(sa.Name) {
		ps.Add(doc, at.Child("service_account").Child("name"), "%q is not a valid ServiceAccount name (a DNS-1123 subdomain)", sa.Name)
	} else if sa != nil && !sa.Create && sa.Name == "" {
		ps.AddKey(doc, at.Child("service_account"), "name the existing ServiceAccount, or set create: true to have one made as <app>-<component>")
	}
	if sa := w.ServiceAccount; sa != nil && !sa.Create && len(sa.Annotations) > 0 {
		ps.AddKey(doc, at.Child("service_account").Child("annotations"), "annotations are set on a created ServiceAccount only; set create: true, or annotate the existing one")
	}
}

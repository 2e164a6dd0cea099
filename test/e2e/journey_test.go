package e2e

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/webhook"
	"github.com/fleetwright/fleetwright/test/cluster"
)

const (
	appFile    = "apps/" + project + "/" + appName + "/app.json"
	pageFile   = "apps/" + project + "/" + appName + "/api/index.html"
	deployFile = "fleet/apps/" + clusterName + "/" + project + "/" + appName + "/api/deployment-" + appName + "-api.yaml"
)

// TestJourney walks the path a team walks with fleetwright, with real Flux
// applying what render writes: a new app reviewed, merged, built, verified,
// applied and probed; an image bump; a broken change that Flux's health
// check fails; a rollback; pause and resume; and deletion.
func TestJourney(t *testing.T) {
	// The journey's fleet reads the fleet's GitRepository (no
	// fleet.artifacts), across namespaces from the project's: Flux's
	// lockdown refuses that (docs/cluster.md).
	j := newJourney(t, cluster.WithoutLockdown())
	registry := j.reg.Host() + "/fleet/" + project + "/" + appName + "-api"

	// 1. A developer adds the app on a branch; CI validates and reviews it.
	j.gitIn(j.apps, "checkout", "-q", "-b", "add-my-api")
	j.addSeedApp()
	j.gitIn(j.apps, "add", "-A")
	j.gitIn(j.apps, "commit", "-q", "-m", "Add my-api: PostgreSQL and an api built from its Dockerfile")
	if r := j.must(j.apps, "render", "validate", "."); !strings.Contains(r.stderr, "1 app(s), 2 component(s): valid") {
		t.Fatalf("render validate: %s", r)
	}
	pr, base, head := j.openAppsPR("add-my-api", "Add my-api")
	comment := j.review(pr, base, head)
	for _, want := range []string{
		"**1 app(s) added, 0 changed, 0 removed.**",
		"| `" + clusterName + "/" + project + "/" + appName + "` | added |",
		"flowchart LR", "c_postgres --> c_api", `"connection_string → DATABASE_URL"`,
		"added — Deployment my-project/my-api-api", "added — HorizontalPodAutoscaler my-project/my-api-api",
		"added — Ingress my-project/my-api-api", "added — Service my-project/my-api-api",
		"added — HelmRelease my-project/my-api-postgres", "added — HelmRepository my-project/my-api-postgres",
		"added — clusters/journey/projects/my-project.yaml", // the Namespace, the project's service account and RoleBinding
		"+kind: Namespace", "+kind: ServiceAccount", "+kind: RoleBinding",
	} {
		if !strings.Contains(comment, want) {
			t.Errorf("the review comment lacks %q:\n%s", want, comment)
		}
	}
	tag1 := imageTag(t, comment, registry, "`—` | `")
	j.pass(1, "render validate passes; the review comment shows the new app, its graph and its objects")

	// 2. Merge: render builds and pins the image and opens the fleet pull
	// request; verify checks it against the live cluster; it is merged.
	spec1 := j.mergeApps(pr, "add-my-api")
	fleetPR := j.renderFleetPR()
	image1 := j.pinnedImage(prBranch, registry)
	if want := registry + ":" + tag1 + "@sha256:"; !strings.HasPrefix(image1, want) {
		t.Errorf("the fleet runs %s, want the image the review named, %s…", image1, want)
	}
	fleetDir := j.cloneFleet(prBranch)
	j.clusterUp()
	vr := j.must(fleetDir, "verify", "--apps", j.apps, "--kubeconfig", j.c.Kubeconfig, "fleet")
	if !strings.Contains(vr.stdout, "0 error(s)") {
		t.Errorf("verify: %s", vr)
	}
	rev1 := j.mergeFleet(fleetPR)
	tree1 := j.fleetTree("main")
	j.pass(2, fmt.Sprintf("render built and pinned %s, opened fleet pull request #%d; verify passed with live checks; merged", image1, fleetPR))

	// 3. Flux applies it. The webhook and the Alert that feeds it are in
	// place first, so that it sees the first deployment from its start.
	j.ing = startIngress(t, j.c.Client, host)
	// The webhook's GitHub deployments and statuses follow Flux's pace, so
	// their number is bounded, not fixed; what they say is asserted below.
	j.gh.Expect("POST", "/repos/"+fleetRepo+"/deployments").Between(1, 40).
		JSONField("task", "deploy").JSONField("environment", project+"/"+appName).JSONField("auto_merge", false)
	j.gh.Expect("POST", "/repos/"+fleetRepo+"/deployments/*/statuses").Between(1, 200).Body(func(b map[string]any) error {
		if s := fmt.Sprint(b["state"]); !slices.Contains([]string{"in_progress", "success", "failure", "inactive"}, s) {
			return fmt.Errorf("state %q is none the phases map to", s)
		}
		return nil
	})
	j.startWebhook()
	j.forwardEvents()
	j.bootstrapFlux()
	d := j.waitApplied(rev1, 2)
	j.checkAppliedInOrder(d)
	j.checkDatabaseURL(d)
	if got := d.Spec.Template.Spec.Containers[0].Image; got != image1 {
		t.Errorf("the Deployment runs %s, want %s", got, image1)
	}
	j.pass(3, "Flux applied the app: the chart installed, the api after it, DATABASE_URL wired to the chart's Secret, 2 pods running")

	// 4. The webhook, fed by notification-controller, sees it running and
	// reports the live URL to GitHub.
	ds := j.waitPhase(rev1, "running", 2*time.Minute)
	liveURL := "https://" + host + "/"
	if ds.LiveURL != liveURL {
		t.Errorf("live URL = %q, want %q", ds.LiveURL, liveURL)
	}
	for _, c := range ds.Checks {
		if c.State != probe.StatePassed {
			t.Errorf("check %s = %s (%s), want passed", c.Name, c.State, c.Message)
		}
	}
	if h := j.history(); len(h) != 1 || h[0].SpecRevision != spec1 {
		t.Errorf("history = %+v, want one deployment of spec revision %s", h, spec1)
	}
	if _, st := j.githubDeployment(rev1, "success"); st.EnvironmentURL != liveURL {
		t.Errorf("GitHub deployment status = %+v, want success at %s", st, liveURL)
	}
	j.checkSpecRevision(rev1, spec1)
	if !slices.Contains(j.ing.Seen(), host+" 200") {
		t.Errorf("the ingress stand-in served %q, want a 200 for %s", j.ing.Seen(), host)
	}
	j.checkStatusPage(liveURL)
	j.pass(4, "the webhook shows the deployment running at "+liveURL+", on its status page too; GitHub's deployment status is success with that URL")

	// 5. A new page: a new image, shown in review, rolled out by Flux.
	j.gitIn(j.apps, "checkout", "-q", "-b", "new-page")
	j.edit(pageFile, "my-api v1", "my-api v2")
	j.gitIn(j.apps, "commit", "-q", "-am", "New front page")
	pr, base, head = j.openAppsPR("new-page", "New front page")
	comment = j.review(pr, base, head)
	if !strings.Contains(comment, "**0 app(s) added, 1 changed, 0 removed.**") {
		t.Errorf("the review comment does not show one changed app:\n%s", comment)
	}
	tag2 := imageTag(t, comment, registry, "`"+registry+":"+tag1+"` | `")
	spec2 := j.mergeApps(pr, "new-page")
	fleetPR = j.renderFleetPR()
	image2 := j.pinnedImage(prBranch, registry)
	if !strings.HasPrefix(image2, registry+":"+tag2+"@sha256:") || digestOf(image2) == digestOf(image1) {
		t.Errorf("the new fleet runs %s, want a new digest of %s:%s", image2, registry, tag2)
	}
	rev2 := j.mergeFleet(fleetPR)
	if d := j.waitApplied(rev2, 2); d.Spec.Template.Spec.Containers[0].Image != image2 {
		t.Errorf("the Deployment runs %s, want %s", d.Spec.Template.Spec.Containers[0].Image, image2)
	}
	j.waitPhase(rev2, "running", 2*time.Minute)
	if h := j.history(); len(h) < 2 || h[0].Revision != rev2 || h[len(h)-1].Revision != rev1 {
		t.Errorf("history = %+v, want %s after %s", h, rev2, rev1)
	}
	j.githubDeployment(rev2, "success")
	// Flux's first events of rev2 still carry the annotation of rev1's spec:
	// the webhook takes the spec revision from the cluster.
	j.checkSpecRevision(rev2, spec2)
	j.pass(5, fmt.Sprintf("the review showed the image change %s → %s; Flux rolled out %s; the webhook shows a second deployment", tag1, tag2, digestOf(image2)))

	// 6. A broken change: the api asks for more CPU than any node has,
	// and the app's timeout is short, so Flux's health check gives up.
	j.gitIn(j.apps, "checkout", "-q", "-b", "more-cpu")
	j.edit(appFile, `"cpu": "100m"`, `"cpu": "200"`, `"timeout": "3m"`, `"timeout": "20s"`)
	j.gitIn(j.apps, "commit", "-q", "-am", "Give the api 200 CPUs and a 20s timeout")
	pr, _, _ = j.openAppsPR("more-cpu", "More CPU")
	spec3 := j.mergeApps(pr, "more-cpu")
	rev3 := j.mergeFleet(j.renderFleetPR())
	fluxReason := j.waitHealthCheckFailed(appKustomizations[1], rev3)
	j.waitPhase(rev3, "failed", 2*time.Minute)
	j.waitComponentFailed("api", fluxReason)
	ds = j.waitFluxReason(rev3, fluxReason)
	j.checkSpecRevision(rev3, spec3)
	j.checkUnschedulable()
	j.pass(6, "Flux's health check failed ("+fluxReason+"); the webhook shows the deployment failed with Flux's reason ("+ds.Message+"), the api failed likewise; GitHub says failure with that reason")

	// 7. Roll back to the first revision: a new commit, rendered and merged
	// as any other; the fleet is what it was after step 2.
	r := j.must(j.apps, "render", "rollback", appName, "--to", spec1)
	subject := j.gitIn(j.apps, "log", "-1", "--format=%s")
	if want := "rollback " + project + "/" + appName + " to " + spec1[:12]; subject != want {
		t.Errorf("rollback commit %q, want %q (%s)", subject, want, r)
	}
	j.gitIn(j.apps, "push", "-q", "origin", "main")
	spec4 := j.gitIn(j.apps, "rev-parse", "HEAD")
	rev4 := j.mergeFleet(j.renderFleetPR())
	tree4 := j.fleetTree("main")
	if diff := cmp.Diff(withoutSpecRevision(tree1, spec1), withoutSpecRevision(tree4, spec4)); diff != "" {
		t.Errorf("the fleet after the rollback differs from the first one (-first +rollback):\n%s", diff)
	}
	if d := j.waitApplied(rev4, 2); d.Spec.Template.Spec.Containers[0].Image != image1 {
		t.Errorf("the Deployment runs %s after the rollback, want %s", d.Spec.Template.Spec.Containers[0].Image, image1)
	}
	j.waitPhase(rev4, "running", 2*time.Minute)
	if h := j.history(); h[0].Revision != rev4 || h[0].Phase != "running" {
		t.Errorf("newest deployment = %+v, want %s running", h[0], rev4)
	}
	j.checkSpecRevision(rev4, spec4)
	j.pass(7, "render rollback made a new commit; the fleet is byte for byte the first one but for the spec revision; Flux converged; the webhook shows it running")

	// 8. Pause (workloads to 0, no autoscaler, the database untouched),
	// then resume.
	addon := j.addonState()
	spec5 := j.lifecycle("pause")
	rev5 := j.mergeFleet(j.renderFleetPR())
	j.waitApplied(rev5, 0)
	j.eventually("the autoscaler is pruned", time.Minute, func() error {
		return j.gone(&autoscalingv2.HorizontalPodAutoscaler{}, project, appName+"-api")
	})
	if got := j.addonState(); got != addon {
		t.Errorf("pausing touched the addon: %s, was %s", got, addon)
	}
	j.waitPhase(rev5, "paused", 2*time.Minute)
	j.checkSpecRevision(rev5, spec5)
	spec6 := j.lifecycle("resume")
	rev6 := j.mergeFleet(j.renderFleetPR())
	j.waitApplied(rev6, 2)
	var hpa autoscalingv2.HorizontalPodAutoscaler
	if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: project, Name: appName + "-api"}, &hpa); err != nil {
		t.Errorf("the autoscaler is not back: %v", err)
	}
	j.waitPhase(rev6, "running", 2*time.Minute)
	j.checkSpecRevision(rev6, spec6)
	j.pass(8, "pause scaled the api to 0 and removed its autoscaler, the database kept running; resume brought 2 replicas and the autoscaler back")

	// 9. Delete: the app's fleet files go and Flux prunes every object, as
	// the project's account; the project's file (its Namespace, account
	// and binding) goes with the next render.
	j.lifecycle("delete")
	rev7 := j.mergeFleet(j.renderFleetPR())
	projectFile := "fleet/clusters/" + clusterName + "/projects/" + project + ".yaml"
	if left := slices.Sorted(maps.Keys(j.fleetTree("main"))); !slices.Equal(left, []string{bootstrapFile, projectFile}) {
		t.Errorf("fleet files after the delete: %q, want the platform's %s and the emptied project's %s", left, bootstrapFile, projectFile)
	}
	j.eventually("Flux prunes the app", 3*time.Minute, func() error {
		if err := j.kustomizationReady("fleet-"+clusterName, rev7); err != nil {
			return err
		}
		for _, k := range appKustomizations {
			if err := j.gone(&kustomizev1.Kustomization{}, kustomizationNS(k), k); err != nil {
				return err
			}
		}
		return nil
	})
	ds = j.waitGone()
	rev8 := j.mergeFleet(j.renderFleetPR())
	if left := slices.Sorted(maps.Keys(j.fleetTree("main"))); !slices.Equal(left, []string{bootstrapFile}) {
		t.Errorf("fleet files after the next render: %q, want only the platform's %s", left, bootstrapFile)
	}
	j.eventually("Flux deletes the project's namespace", 3*time.Minute, func() error {
		if err := j.kustomizationReady("fleet-"+clusterName, rev8); err != nil {
			return err
		}
		return j.gone(&corev1.Namespace{}, "", project)
	})
	// The deletion is the deployment of rev7 when Flux reported on the app's
	// Kustomizations at rev7 before pruning them, else the one of rev6.
	if ds.Revision != rev7 && ds.Revision != rev6 {
		t.Errorf("the deleted app's last deployment is of %s, want %s (or %s)", ds.Revision, rev7, rev6)
	}
	var apps struct {
		Apps []struct {
			Project, Name, Phase string
			LiveURL              string `json:"live_url"`
		} `json:"apps"`
	}
	if err := j.get("/api/v1/apps", &apps); err != nil {
		t.Fatal(err)
	}
	if len(apps.Apps) != 1 || apps.Apps[0].Name != appName || apps.Apps[0].Phase != "deleted" || apps.Apps[0].LiveURL != "" {
		t.Errorf("apps = %+v, want %s/%s deleted with no live URL", apps.Apps, project, appName)
	}
	// GitHub's deployment of the environment, rev6's, is retired.
	j.githubDeployment(rev6, "inactive")
	// The history keeps every deployment, each with its step's spec
	// revision; rev7's, if any, names none: no spec of the app is left.
	specs := map[string]string{rev1: spec1, rev2: spec2, rev3: spec3, rev4: spec4, rev5: spec5, rev6: spec6, rev7: ""}
	var got []string
	for _, d := range j.history() {
		got = append(got, d.Revision)
		if want, ok := specs[d.Revision]; !ok || d.SpecRevision != want {
			t.Errorf("deployment %d of %s has spec revision %q, want %q", d.ID, d.Revision, d.SpecRevision, want)
		}
	}
	want := []string{rev6, rev5, rev4, rev3, rev2, rev1}
	if ds.Revision == rev7 {
		want = append([]string{rev7}, want...)
	}
	if !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
	j.pass(9, "render delete removed the app's fleet files, the next render the project's; Flux pruned the app, then its namespace; the webhook lists no pod and Flux's uninstall, shows the app "+string(ds.Phase)+" ("+ds.Message+"), and GitHub's deployment is inactive")
}

// checkSpecRevision checks that the webhook's deployment of rev, and the
// GitHub deployment of its fleet commit, name spec: the apps-repo commit of
// the step.
func (j *journey) checkSpecRevision(rev, spec string) {
	j.t.Helper()
	var found bool
	for _, d := range j.history() {
		if d.Revision != rev {
			continue
		}
		found = true
		if d.SpecRevision != spec {
			j.t.Errorf("the deployment of %s has spec revision %q, want %s", rev, d.SpecRevision, spec)
		}
	}
	if !found {
		j.t.Errorf("no deployment of %s in the webhook's history", rev)
	}
	commit := rev[strings.LastIndex(rev, ":")+1:]
	j.eventually("a GitHub deployment of "+commit, time.Minute, func() error {
		for _, d := range j.gh.Deployments(fleetRepo) {
			if d.Ref != commit {
				continue
			}
			p, _ := d.Payload.(map[string]any)
			if got := fmt.Sprint(p["spec_revision"]); got != spec {
				j.t.Errorf("GitHub deployment %d of %s has spec_revision %q, want %s", d.ID, commit, got, spec)
			}
			return nil
		}
		return fmt.Errorf("no GitHub deployment of %s yet", commit)
	})
}

// waitFluxReason waits until the webhook's deployment of rev, failed, and
// its GitHub status give Flux's own reason, and returns the deployment's
// status.
func (j *journey) waitFluxReason(rev, fluxReason string) webhook.DeployStatus {
	j.t.Helper()
	var ds webhook.DeployStatus
	j.eventually("the webhook fails "+rev+" with Flux's reason", time.Minute, func() error {
		ds = webhook.DeployStatus{}
		if err := j.get(appPath+"/deploy-status", &ds); err != nil {
			return err
		}
		if ds.Revision != rev || ds.Phase != "failed" || !strings.Contains(ds.Message, meta.HealthCheckFailedReason+": "+fluxReason) {
			return fmt.Errorf("deployment %d: %s %s: %s", ds.DeploymentID, ds.Revision, ds.Phase, ds.Message)
		}
		return nil
	})
	// GitHub's description is "failed: <message>", cut to 140 characters.
	want := []rune("failed: " + ds.Message)
	if len(want) > 140 {
		want = want[:139]
	}
	j.eventually("GitHub's failure status gives Flux's reason", time.Minute, func() error {
		_, st := j.githubDeployment(rev, "failure")
		if !strings.HasPrefix(st.Description, string(want)) {
			return fmt.Errorf("the failure status says %q, want %q", st.Description, string(want))
		}
		return nil
	})
	return ds
}

// lifecycle runs a lifecycle verb with --commit on main and pushes it, as
// the lifecycle workflow's direct mode does; it returns the commit.
func (j *journey) lifecycle(verb string) string {
	j.t.Helper()
	j.must(j.apps, "render", verb, appName, "--commit")
	if want := verb + " " + project + "/" + appName; j.gitIn(j.apps, "log", "-1", "--format=%s") != want {
		j.t.Fatalf("render %s did not commit %q", verb, want)
	}
	j.gitIn(j.apps, "push", "-q", "origin", "main")
	return j.gitIn(j.apps, "rev-parse", "HEAD")
}

// imageTag finds the api's image in the review comment's image table,
// after prefix, and returns its tag.
func imageTag(t *testing.T, comment, repo, prefix string) string {
	t.Helper()
	re := regexp.MustCompile(regexp.QuoteMeta("| `my-project/my-api-api (api)` | "+prefix+repo+":") + "([0-9a-f]{16})`")
	m := re.FindStringSubmatch(comment)
	if m == nil {
		t.Fatalf("the review comment names no image %s:<content tag> after %q:\n%s", repo, prefix, comment)
	}
	return m[1]
}

// pinnedImage returns the image of the api's Deployment in the fleet at
// ref, and checks that the registry holds that digest.
func (j *journey) pinnedImage(ref, repo string) string {
	j.t.Helper()
	out := j.gitIn(j.fleetBare, "show", ref+":"+deployFile)
	m := regexp.MustCompile(`(?m)^\s+image: "?([^"\s]+)"?$`).FindStringSubmatch(out)
	if m == nil || !strings.HasPrefix(m[1], repo+":") {
		j.t.Fatalf("no image of %s in %s:\n%s", repo, deployFile, out)
	}
	r, err := name.ParseReference(m[1])
	if err != nil {
		j.t.Fatal(err)
	}
	desc, err := remote.Head(r, remote.WithContext(j.ctx))
	if err != nil {
		j.t.Fatalf("the registry lacks %s: %v", m[1], err)
	}
	if desc.Digest.String() != digestOf(m[1]) {
		j.t.Fatalf("the registry has %s at digest %s", m[1], desc.Digest)
	}
	return m[1]
}

func digestOf(image string) string {
	_, d, _ := strings.Cut(image, "@")
	return d
}

var specRevision = regexp.MustCompile(`(spec-revision: )"?([0-9a-f]{40})"?`)

// withoutSpecRevision replaces the spec revision annotations, which name
// the commit rendered, after checking they name want.
func withoutSpecRevision(tree map[string]string, want string) map[string]string {
	out := make(map[string]string, len(tree))
	for p, b := range tree {
		out[p] = specRevision.ReplaceAllStringFunc(b, func(s string) string {
			m := specRevision.FindStringSubmatch(s)
			if m[2] != want {
				return s // left as it is, so that the diff shows it
			}
			return m[1] + "<spec revision>"
		})
	}
	return out
}

// checkAppliedInOrder checks that the api was applied after its
// dependency: the Secret the chart created is older than the Deployment.
func (j *journey) checkAppliedInOrder(d *appsv1.Deployment) {
	j.t.Helper()
	var s corev1.Secret
	if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: project, Name: appName + "-postgres"}, &s); err != nil {
		j.t.Fatalf("the chart's Secret: %v", err)
	}
	if d.CreationTimestamp.Before(&s.CreationTimestamp) {
		j.t.Errorf("the Deployment (created %s) came before the chart's Secret (created %s)", d.CreationTimestamp, s.CreationTimestamp)
	}
	var hr helmv2.HelmRelease
	if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: project, Name: appName + "-postgres"}, &hr); err != nil {
		j.t.Fatal(err)
	}
	if !apimeta.IsStatusConditionTrue(hr.Status.Conditions, meta.ReadyCondition) {
		j.t.Errorf("HelmRelease %s is not Ready: %v", hr.Name, hr.Status.Conditions)
	}
}

// checkDatabaseURL checks that DATABASE_URL resolves in the cluster: every
// secretKeyRef of the container names a key of a live Secret, every $(VAR)
// in DATABASE_URL is defined before it, and its host and port are the live
// Service's.
func (j *journey) checkDatabaseURL(d *appsv1.Deployment) {
	j.t.Helper()
	env := d.Spec.Template.Spec.Containers[0].Env
	defined := map[string]bool{}
	var url string
	for _, e := range env {
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
			var s corev1.Secret
			key := client.ObjectKey{Namespace: d.Namespace, Name: ref.SecretKeyRef.Name}
			if err := j.c.Client.Get(j.ctx, key, &s); err != nil {
				j.t.Errorf("%s: secretKeyRef %s: %v", e.Name, key, err)
			} else if len(s.Data[ref.SecretKeyRef.Key]) == 0 {
				j.t.Errorf("%s: Secret %s has no key %q", e.Name, key, ref.SecretKeyRef.Key)
			}
		}
		if e.Name == "DATABASE_URL" {
			url = e.Value
			for _, m := range regexp.MustCompile(`\$\(([A-Z0-9_]+)\)`).FindAllStringSubmatch(e.Value, -1) {
				if !defined[m[1]] {
					j.t.Errorf("DATABASE_URL uses $(%s), which no earlier variable defines", m[1])
				}
			}
		}
		defined[e.Name] = true
	}
	want := fmt.Sprintf("postgresql://myapp:$(FW_DATABASE_URL_PASSWORD)@%s-postgres.%s.svc.cluster.local:5432/myapp", appName, project)
	if url != want {
		j.t.Errorf("DATABASE_URL = %q, want %q", url, want)
	}
	var svc corev1.Service
	if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: project, Name: appName + "-postgres"}, &svc); err != nil {
		j.t.Errorf("the database's Service: %v", err)
	} else if len(svc.Spec.Ports) == 0 || svc.Spec.Ports[0].Port != 5432 {
		j.t.Errorf("the database's Service ports = %+v, want 5432", svc.Spec.Ports)
	}
}

// waitHealthCheckFailed waits for Flux's own verdict on rev and returns its
// message.
func (j *journey) waitHealthCheckFailed(name, rev string) string {
	j.t.Helper()
	var msg string
	j.eventually("Flux's health check of "+name+" fails", 3*time.Minute, func() error {
		var k kustomizev1.Kustomization
		if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: kustomizationNS(name), Name: name}, &k); err != nil {
			return err
		}
		rev, err := j.sourceRevision(&k, rev)
		if err != nil {
			return err
		}
		ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
		if k.Status.LastAttemptedRevision != rev || ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != meta.HealthCheckFailedReason {
			return fmt.Errorf("Kustomization %s attempted %s: %s", name, k.Status.LastAttemptedRevision, conditionText(ready))
		}
		msg = ready.Message
		return nil
	})
	return msg
}

// waitComponentFailed waits until the webhook's view of the app shows the
// component failed with Flux's reason.
func (j *journey) waitComponentFailed(component, fluxMessage string) {
	j.t.Helper()
	j.eventually("the webhook shows "+component+" failed with Flux's reason", time.Minute, func() error {
		var a webhook.AppStatus
		if err := j.get(appPath, &a); err != nil {
			return err
		}
		for _, c := range a.Components {
			if c.Name != component {
				continue
			}
			if c.Health != "failed" || c.Flux == nil || c.Flux.Reason != meta.HealthCheckFailedReason || c.Flux.Message != fluxMessage {
				return fmt.Errorf("component %s: %s (%s); Flux event %+v", c.Name, c.Health, c.Message, c.Flux)
			}
			return nil
		}
		return fmt.Errorf("no component %s in %+v", component, a.Components)
	})
}

// checkUnschedulable checks that the broken revision's pod is pending for
// want of CPU, which is why Flux gave up.
func (j *journey) checkUnschedulable() {
	j.t.Helper()
	j.eventually("a pod of the broken revision is unschedulable", 30*time.Second, func() error {
		var pods corev1.PodList
		if err := j.c.Client.List(j.ctx, &pods, client.InNamespace(project), client.MatchingLabels{"app.kubernetes.io/instance": appName + "-api"}); err != nil {
			return err
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable && strings.Contains(c.Message, "cpu") {
					return nil
				}
			}
		}
		return fmt.Errorf("no unschedulable pod among %d", len(pods.Items))
	})
}

// addonState describes what pausing must not touch: the database's
// StatefulSet, its Secret and its Helm release.
func (j *journey) addonState() string {
	j.t.Helper()
	key := client.ObjectKey{Namespace: project, Name: appName + "-postgres"}
	var ss appsv1.StatefulSet
	var s corev1.Secret
	var hr helmv2.HelmRelease
	for _, o := range []client.Object{&ss, &s, &hr} {
		if err := j.c.Client.Get(j.ctx, key, o); err != nil {
			j.t.Fatal(err)
		}
	}
	release := 0
	if l := hr.Status.History.Latest(); l != nil {
		release = l.Version
	}
	return fmt.Sprintf("StatefulSet generation %d ready %d, Secret version %s, Helm release version %d",
		ss.Generation, ss.Status.ReadyReplicas, s.ResourceVersion, release)
}

// gone reports whether the object is not in the cluster.
func (j *journey) gone(o client.Object, namespace, name string) error {
	err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: namespace, Name: name}, o)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%T %s/%s is still there (deletion %v)", o, namespace, name, o.GetDeletionTimestamp())
}

// waitGone waits until the webhook finds nothing of the deleted app left
// in the cluster: no pod, Flux's report of the uninstall of its addon among
// its events, and the app deleted. It returns what the webhook shows of the
// app.
func (j *journey) waitGone() webhook.DeployStatus {
	j.t.Helper()
	j.eventually("the webhook sees the app gone", 2*time.Minute, func() error {
		var pods struct {
			Pods []webhook.PodView `json:"pods"`
		}
		if err := j.get(appPath+"/pods", &pods); err != nil {
			return err
		}
		if len(pods.Pods) != 0 {
			return fmt.Errorf("the webhook still lists %d pods", len(pods.Pods))
		}
		var events struct {
			Events []webhook.EventView `json:"events"`
		}
		if err := j.get(appPath+"/events?limit=100", &events); err != nil {
			return err
		}
		if !slices.ContainsFunc(events.Events, func(e webhook.EventView) bool { return e.Source == "flux" && e.Reason == "UninstallSucceeded" }) {
			return fmt.Errorf("no uninstall among the %d events the webhook keeps", len(events.Events))
		}
		var ds webhook.DeployStatus
		if err := j.get(appPath+"/deploy-status", &ds); err != nil {
			return err
		}
		if ds.Phase != "deleted" {
			return fmt.Errorf("the webhook shows the app %s: %s", ds.Phase, ds.Message)
		}
		return nil
	})
	var ds webhook.DeployStatus
	if err := j.get(appPath+"/deploy-status", &ds); err != nil {
		j.t.Fatal(err)
	}
	if !strings.HasPrefix(ds.Message, "Flux pruned the app: ") {
		j.t.Errorf("the deleted app's message = %q, want Flux's pruning", ds.Message)
	}
	return ds
}

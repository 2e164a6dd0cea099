package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/webhook"
	"github.com/fleetwright/fleetwright/test/cluster"
)

// The preview journey's app: one workload, an image given (no build, no
// addon), one ingress host.
const (
	previewApp     = "web"
	previewAppFile = "apps/" + project + "/" + previewApp + "/app.yaml"
	previewDomain  = "preview.journey.test"
)

// previewHost is the host of the app in pull request pr's preview:
// <app>-<project>-pr<N>.<previews.apps_domain>.
func previewHost(pr int) string {
	return previewApp + "-" + layout.PreviewNamespace(project, pr) + "." + previewDomain
}

// TestPreviewJourney walks a pull request's preview with real Flux: the
// platform team turns previews on; a pull request that adds an app is
// reviewed and `render preview` pushes its preview; Flux applies it in the
// project's preview namespace; the webhook, fed by notification-controller
// through the Alert's sources for that namespace, sees it running at its
// preview host through the probes and reports a transient GitHub
// deployment in environment pr-N on the pull request's head commit, with
// the live URL, and the state in the review comment's preview section. A
// second push updates it (a new deployment at the new head, the first one
// inactive). A second pull request's preview is forgotten; closing the
// first pull request removes its preview, and the same render run removes
// the forgotten one, older than previews.ttl: Flux prunes every object of
// both, their namespaces included, and the webhook turns both GitHub
// deployments inactive.
func TestPreviewJourney(t *testing.T) {
	// The journey's fleet has no fleet.artifacts: the preview's
	// Kustomizations read the fleet's GitRepository in the Flux namespace
	// from the preview's namespace, which Flux's lockdown refuses
	// (docs/cluster.md). TestTenancyLockdown runs a preview with artifacts
	// under the lockdown.
	j := newJourney(t, cluster.WithoutLockdown())
	t0 := time.Date(2027, 1, 15, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) {
		j.runEnv = []string{"SOURCE_DATE_EPOCH=" + strconv.FormatInt(t0.Add(d).Unix(), 10)}
	}

	// 1. The platform team turns previews on.
	appendFile(t, filepath.Join(j.apps, "platform.yaml"),
		"previews: {cluster: "+clusterName+", apps_domain: "+previewDomain+", ttl: 1h, max: 3}\n")
	j.gitIn(j.apps, "commit", "-q", "-am", "Previews of pull requests on the journey cluster")
	j.gitIn(j.apps, "push", "-q", "origin", "main")

	// A developer adds the app on a branch; the pull request's review
	// comment has the preview section render preview and the webhook
	// keep up to date.
	j.gitIn(j.apps, "checkout", "-q", "-b", "add-web")
	j.writeWeb("v1")
	j.gitIn(j.apps, "add", "-A")
	j.gitIn(j.apps, "commit", "-q", "-m", "Add web")
	pr1, base1, head1 := j.openAppsPR("add-web", "Add web")
	comment := j.review(pr1, base1, head1)
	if !strings.Contains(comment, github.SectionStart(reviewPreviewSection)) {
		t.Fatalf("the review comment has no preview section:\n%s", comment)
	}
	j.pass(1, fmt.Sprintf("previews on; pull request #%d adds %s/%s; its review comment has the preview section", pr1, project, previewApp))

	// 2. The cluster, its ingress, the webhook and Flux.
	j.clusterUp()
	j.ing = startIngress(t, j.c.Client, previewHost(1), previewHost(2))
	j.gh.Expect("POST", "/repos/"+appsRepo+"/deployments").Between(3, 12).Body(func(b map[string]any) error {
		env := fmt.Sprint(b["environment"])
		if _, ok := layout.PreviewOf(env); !ok || b["transient_environment"] != true || b["task"] != "deploy" {
			return fmt.Errorf("a deployment in %q, transient_environment %v", env, b["transient_environment"])
		}
		return nil
	})
	j.gh.Expect("POST", "/repos/"+appsRepo+"/deployments/*/statuses").Between(3, 80).Body(func(b map[string]any) error {
		if b["auto_inactive"] != false {
			return fmt.Errorf("a status without auto_inactive false: %v", b)
		}
		return nil
	})
	for _, pr := range []int{1, 2} {
		j.gh.Expect("GET", fmt.Sprintf("/repos/%s/issues/%d/comments", appsRepo, pr)).Between(1, 200)
	}
	j.gh.Expect("PATCH", "/repos/"+appsRepo+"/issues/comments/*").Between(2, 100)
	j.webhookArgs = []string{"-github-apps-repo", appsRepo}
	j.startWebhook()
	j.forwardEvents()
	j.forwardPreviewEvents(1, 2)
	j.bootstrapFlux()
	j.pass(2, "the webhook reports to the apps repository (-github-apps-repo); the Alert forwards the previews' namespaces; Flux bootstrapped")

	// 3. render preview pushes pull request 1's preview; Flux applies it,
	// the webhook sees it running at its host.
	at(0)
	r := j.must(j.apps, "render", "preview", "--pr", "1", "--base", base1, "--head", head1, "--offline", "--github-repo", appsRepo)
	rev1 := j.fleetHead()
	j.requestReconcile()
	ns1 := layout.PreviewNamespace(project, 1)
	ds := j.waitPreview(1, rev1, "running")
	live1 := "https://" + previewHost(1) + "/"
	if ds.LiveURL != live1 {
		t.Errorf("the preview's live URL = %q, want %q", ds.LiveURL, live1)
	}
	d := j.previewDeployment(ns1)
	if got := d.Labels[layout.LabelEnvironment]; got != "pr-1" {
		t.Errorf("the preview's Deployment is labelled environment %q", got)
	}
	dep1 := j.previewGitHub(head1, "success")
	if st, _ := dep1.LastStatus(); st.EnvironmentURL != live1 {
		t.Errorf("GitHub's deployment of the preview has environment_url %q, want %q", st.EnvironmentURL, live1)
	}
	j.waitPreviewSection(1, "**Preview:** pr-1, running at `"+head1[:12]+"` — "+live1)
	j.pass(3, fmt.Sprintf("render preview pushed %s (%s); Flux applied it in %s; the webhook shows it running at %s; GitHub's deployment in pr-1 at %s is a success with that URL; the review comment says so",
		rev1, lineWith(r.stderr, "pushed "), ns1, live1, head1[:12]))

	// 4. A second push updates the preview.
	j.writeWeb("v2")
	j.gitIn(j.apps, "commit", "-q", "-am", "web v2")
	j.gitIn(j.apps, "push", "-q", "origin", "add-web")
	head2 := j.gitIn(j.apps, "rev-parse", "HEAD")
	at(10 * time.Minute)
	j.must(j.apps, "render", "preview", "--pr", "1", "--base", base1, "--head", head2, "--offline", "--github-repo", appsRepo)
	rev2 := j.fleetHead()
	j.requestReconcile()
	j.waitPreview(1, rev2, "running")
	if img := j.previewDeployment(ns1).Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, ":v2") {
		t.Errorf("the preview runs %s after the second push, want v2", img)
	}
	j.previewGitHub(head2, "success")
	j.previewGitHub(head1, "inactive")
	j.waitPreviewSection(1, "**Preview:** pr-1, running at `"+head2[:12]+"` — "+live1)
	j.pass(4, fmt.Sprintf("the second push (%s) rolled the preview to v2 at %s; GitHub's deployment at the new head is a success, the first one inactive", head2[:12], rev2))

	// 5. A second pull request's preview, which nobody closes.
	j.gitIn(j.apps, "checkout", "-q", "main")
	j.gitIn(j.apps, "checkout", "-q", "-b", "web-banner")
	j.writeWeb("banner")
	j.gitIn(j.apps, "add", "-A")
	j.gitIn(j.apps, "commit", "-q", "-m", "web with a banner")
	pr2, base3, head3 := j.openAppsPR("web-banner", "web with a banner")
	at(20 * time.Minute)
	j.must(j.apps, "render", "preview", "--pr", strconv.Itoa(pr2), "--base", base3, "--head", head3, "--offline", "--github-repo", appsRepo)
	rev3 := j.fleetHead()
	j.requestReconcile()
	j.waitPreview(pr2, rev3, "running")
	j.previewGitHub(head3, "success")
	j.pass(5, fmt.Sprintf("pull request #%d's preview runs at https://%s/ beside #%d's", pr2, previewHost(pr2), pr1))

	// 6. Pull request 1 closes, hours later: its preview is removed, and
	// so is #2's, not updated for longer than previews.ttl.
	at(3 * time.Hour)
	r = j.must(j.apps, "render", "preview", "--pr", "1", "--close", "--head", head2, "--offline", "--github-repo", appsRepo)
	if want := fmt.Sprintf("preview pr-%d removed", pr2); !strings.Contains(r.stderr+r.stdout, want) {
		t.Errorf("render preview --close does not say %q:\n%s", want, r)
	}
	rev4 := j.fleetHead()
	j.requestReconcile()
	for _, f := range strings.Fields(j.gitIn(j.fleetBare, "ls-tree", "-r", "--name-only", "main", "--", "fleet")) {
		if strings.Contains(f, "/previews/") || strings.HasPrefix(f, "fleet/previews/") {
			t.Errorf("the fleet still holds %s after both previews were removed", f)
		}
	}
	for _, pr := range []int{1, pr2} {
		ns := layout.PreviewNamespace(project, pr)
		j.eventually("Flux prunes "+ns, 3*time.Minute, func() error {
			var n corev1.Namespace
			if err := j.gone(&n, "", ns); err != nil {
				return err
			}
			var ks kustomizev1.KustomizationList
			if err := j.c.Client.List(j.ctx, &ks, client.InNamespace(ns)); err != nil {
				return err
			}
			if len(ks.Items) > 0 {
				return fmt.Errorf("%d Kustomizations left in %s", len(ks.Items), ns)
			}
			return nil
		})
		j.waitPreview(pr, "", "deleted")
	}
	j.previewGitHub(head2, "inactive")
	j.previewGitHub(head3, "inactive")
	j.waitPreviewSection(1, "**Preview:** pr-1, removed: Flux pruned it")
	j.pass(6, fmt.Sprintf("closing #%d removed its preview and, past previews.ttl, #%d's (%s); Flux pruned both, namespaces included; the webhook shows both deleted and GitHub's deployments inactive",
		pr1, pr2, rev4))
}

// forwardPreviewEvents adds to the webhook's Alert the sources of the
// previews of pull requests prs: notification-controller matches an event
// source's namespace literally, and each preview has a namespace of its
// own (docs/webhook.md, "Flux setup").
func (j *journey) forwardPreviewEvents(prs ...int) {
	j.t.Helper()
	var alert unstructured.Unstructured
	alert.SetAPIVersion("notification.toolkit.fluxcd.io/v1beta3")
	alert.SetKind("Alert")
	if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: fluxNS, Name: "fleetwright"}, &alert); err != nil {
		j.t.Fatal(err)
	}
	sources, _, err := unstructured.NestedSlice(alert.Object, "spec", "eventSources")
	if err != nil {
		j.t.Fatal(err)
	}
	for _, pr := range prs {
		for _, kind := range []string{"Kustomization", "HelmRelease"} {
			sources = append(sources, map[string]any{"kind": kind, "name": "*", "namespace": layout.PreviewNamespace(project, pr)})
		}
	}
	if err := unstructured.SetNestedSlice(alert.Object, sources, "spec", "eventSources"); err != nil {
		j.t.Fatal(err)
	}
	if err := j.c.Client.Update(j.ctx, &alert); err != nil {
		j.t.Fatal(err)
	}
}

// reviewPreviewSection is the name of the review comment's preview
// section (internal/review's PreviewSection).
const reviewPreviewSection = "preview"

// writeWeb writes the preview journey's app, running image tag tag, in
// the developer's clone.
func (j *journey) writeWeb(tag string) {
	j.t.Helper()
	p := filepath.Join(j.apps, filepath.FromSlash(previewAppFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		j.t.Fatal(err)
	}
	spec := `name: web
project: ` + project + `
timeout: 2m
components:
  - name: web
    type: workload
    workload_spec:
      image: registry.journey.test/` + project + `/web:` + tag + `
      port: 8080
      replicas: 1
      resources: {requests: {cpu: 10m, memory: 16Mi}}
      ingress: {enabled: true, path: /}
`
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		j.t.Fatal(err)
	}
}

// appendFile appends s to the file at p.
func appendFile(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// fleetHead is the Flux revision of the fleet's main branch.
func (j *journey) fleetHead() string {
	j.t.Helper()
	return "main@sha1:" + j.gitIn(j.fleetBare, "rev-parse", "refs/heads/main")
}

// lineWith returns the first line of s that starts with prefix.
func lineWith(s, prefix string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

// waitPreview waits until the webhook shows the app in pull request pr's
// preview at fleet revision rev (any, when empty) in phase.
func (j *journey) waitPreview(pr int, rev, phase string) webhook.DeployStatus {
	j.t.Helper()
	path := fmt.Sprintf("%s/%s/deploy-status?environment=%s", "/api/v1/apps/"+project, previewApp, layout.PreviewEnvironment(pr))
	var ds webhook.DeployStatus
	j.eventually(fmt.Sprintf("the webhook shows pull request #%d's preview %s at %s", pr, phase, rev), 3*time.Minute, func() error {
		ds = webhook.DeployStatus{}
		if err := j.get(path, &ds); err != nil {
			return err
		}
		if (rev != "" && ds.Revision != rev) || string(ds.Phase) != phase {
			return fmt.Errorf("current deployment %d: %s %s: %s", ds.DeploymentID, ds.Revision, ds.Phase, ds.Message)
		}
		return nil
	})
	return ds
}

// previewDeployment returns the app's Deployment in namespace ns, once
// Flux applied it and it is available.
func (j *journey) previewDeployment(ns string) *appsv1.Deployment {
	j.t.Helper()
	var d appsv1.Deployment
	j.eventually("the preview's Deployment in "+ns, time.Minute, func() error {
		if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: ns, Name: previewApp + "-web"}, &d); err != nil {
			return err
		}
		if c := findDeploymentCondition(&d, appsv1.DeploymentAvailable); c == nil || c.Status != corev1.ConditionTrue {
			return fmt.Errorf("Deployment %s/%s not available", ns, d.Name)
		}
		return nil
	})
	return &d
}

func findDeploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// previewGitHub waits until the apps repository's GitHub deployment at
// commit head (a preview's: transient, in a pr-N environment) has a last
// status in state, and returns it.
func (j *journey) previewGitHub(head, state string) githubtest.Deployment {
	j.t.Helper()
	var dep githubtest.Deployment
	j.eventually(fmt.Sprintf("GitHub's preview deployment at %s %s", head[:12], state), 2*time.Minute, func() error {
		var seen []string
		for _, d := range j.gh.Deployments(appsRepo) {
			if d.Ref != head {
				continue
			}
			if _, ok := layout.PreviewOf(d.Environment); !ok || !d.Transient {
				return fmt.Errorf("deployment %d at %s: environment %q, transient %v", d.ID, head[:12], d.Environment, d.Transient)
			}
			if last, ok := d.LastStatus(); ok && last.State == state {
				dep = d
				return nil
			}
			seen = append(seen, fmt.Sprintf("deployment %d: %+v", d.ID, d.Statuses))
		}
		if len(seen) == 0 {
			return fmt.Errorf("no GitHub deployment at %s yet", head[:12])
		}
		return fmt.Errorf("%s", strings.Join(seen, "; "))
	})
	if n := len(j.gh.Deployments(fleetRepo)); n != 0 {
		j.t.Errorf("the fleet repository has %d deployments; a preview's are the apps repository's", n)
	}
	return dep
}

// waitPreviewSection waits until the review comment of pull request pr has
// a preview section that starts with want.
func (j *journey) waitPreviewSection(pr int, want string) {
	j.t.Helper()
	j.eventually(fmt.Sprintf("the preview section of #%d says %q", pr, want), time.Minute, func() error {
		for _, c := range j.gh.Comments(appsRepo, pr) {
			got, ok := github.SectionContent(strings.ReplaceAll(c.Body, "\r\n", "\n"), reviewPreviewSection)
			if !ok {
				continue
			}
			if strings.HasPrefix(got, want) {
				return nil
			}
			return fmt.Errorf("it says:\n%s", got)
		}
		return fmt.Errorf("pull request #%d has no comment with a preview section", pr)
	})
}

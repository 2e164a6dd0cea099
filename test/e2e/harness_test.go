package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
	"github.com/fleetwright/fleetwright/internal/webhook"
	"github.com/fleetwright/fleetwright/test/cluster"
)

// The names the journey uses.
const (
	project     = "my-project"
	appName     = "my-api"
	clusterName = "journey"
	appsRepo    = "acme/apps"
	fleetRepo   = "acme/fleet"
	prBranch    = "fleetwright/render" // render's default fleet pull request branch
	fluxNS      = cluster.FluxNamespace
	host        = appName + "-" + project + ".apps.journey.test" // <app>-<project>.<apps_domain>
	ghToken     = "journey-github-token"
	apiToken    = "journey-api-token"
	hmacKey     = "journey-hmac-key"
)

// The app's Flux Kustomizations, in dependency order: the api reads the
// chart's Secret, so it waits for the addon; the project's Namespace is
// applied by the cluster's root Kustomization, not by one of its own.
var appKustomizations = []string{project + "-" + appName + "-postgres", project + "-" + appName + "-api"}

// journey holds every part of the test's world.
type journey struct {
	t        *testing.T
	ctx      context.Context
	c        *cluster.Cluster
	git      *gittest.Server
	gh       *githubtest.Server
	reg      *registrytest.Server
	chartURL string
	ing      *ingress
	hook     *webhookProcess
	// webhookArgs are more flags startWebhook gives the webhook, and
	// runEnv more variables of the programs' environment (env).
	webhookArgs []string
	runEnv      []string
	// clusterUp waits until c is started (or fails the test).
	clusterUp func()

	home      string // HOME of every command run
	apps      string // the developer's clone of the apps repository
	fleetBare string // the fleet repository on the git server
	fleetURL  string
}

// result is what a command run printed and how it exited.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// newJourney starts the cluster (with opts), the servers around it and the
// developer's apps repository. On failure the cleanup prints what every
// process said.
func newJourney(t *testing.T, opts ...cluster.Option) *journey {
	t.Helper()
	ctx := t.Context()
	j := &journey{t: t, ctx: ctx, home: t.TempDir()}
	j.gh = githubtest.New(t, githubtest.WithToken(ghToken))
	j.reg = registrytest.New(t, registrytest.Options{})
	j.git = gittest.NewServer(t)

	url, stop, err := cluster.StartChartRepo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	j.chartURL = url

	// The cluster starts while the first steps, which need none, run.
	var startErr error
	started := make(chan struct{})
	go func() {
		defer close(started)
		j.c, startErr = cluster.Start(ctx, opts...)
	}()
	j.clusterUp = func() {
		t.Helper()
		<-started
		if startErr != nil {
			t.Fatalf("starting the cluster: %v", startErr)
		}
	}
	t.Cleanup(func() {
		if <-started; startErr != nil {
			return
		}
		if t.Failed() {
			fmt.Fprintf(t.Output(), "==> Flux and workloads <==\n%s\n", j.fluxState())
			fmt.Fprintf(t.Output(), "==> GitHub deployments of %s <==\n%s\n", fleetRepo, j.githubDeployments())
			j.c.WriteLogsTo(t.Output(), 60)
		}
		if err := j.c.Stop(); err != nil {
			t.Error(err)
		}
	})

	// The fleet repository starts with what the platform engineer commits
	// once: a README and the cluster's Flux bootstrap (gotk-sync.yaml).
	j.fleetURL = j.git.RepoURL(fleetRepo + ".git")
	j.git.CreateRepo(t, fleetRepo+".git", "main", map[string]string{
		"README.md":   "# acme fleet\n\nWritten by fleetwright's render; Flux applies fleet/clusters/<cluster>/.\n",
		bootstrapFile: j.template("testdata/fleet-repo/" + bootstrapFile + ".tmpl"),
	})
	j.fleetBare = j.git.Path(fleetRepo + ".git")

	// The apps repository starts with the platform team's platform.yaml.
	platform := j.template("testdata/apps-repo/platform.yaml.tmpl")
	appsURL := j.git.CreateRepo(t, appsRepo+".git", "main", map[string]string{
		"platform.yaml": platform,
		"README.md":     "# acme apps\n\nOne folder per app under apps/<project>/<app>/.\n",
	})
	j.apps = filepath.Join(t.TempDir(), "apps")
	j.gitIn("", "clone", "-q", appsURL, j.apps)
	return j
}

// template renders a file of testdata with the addresses of this run.
func (j *journey) template(name string) string {
	j.t.Helper()
	tmpl, err := template.ParseFiles(name)
	if err != nil {
		j.t.Fatal(err)
	}
	var b strings.Builder
	err = tmpl.Execute(&b, map[string]string{
		"Registry":  j.reg.Host(),
		"FleetRepo": j.fleetURL,
		"ChartRepo": j.chartURL,
	})
	if err != nil {
		j.t.Fatal(err)
	}
	return b.String()
}

// addSeedApp copies the seed app of testdata into the developer's clone.
func (j *journey) addSeedApp() {
	j.t.Helper()
	root := filepath.Join("testdata", "apps-repo", "apps")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(filepath.Join("testdata", "apps-repo"), p)
		if err != nil {
			return err
		}
		var content []byte
		if strings.HasSuffix(p, ".tmpl") {
			content = []byte(j.template(p))
			rel = strings.TrimSuffix(rel, ".tmpl")
		} else if content, err = os.ReadFile(p); err != nil {
			return err
		}
		dst := filepath.Join(j.apps, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, content, 0o644)
	})
	if err != nil {
		j.t.Fatal(err)
	}
}

// edit changes a file of the developer's clone, as a person would in an
// editor: each old string must be there once.
func (j *journey) edit(rel string, oldNew ...string) {
	j.t.Helper()
	p := filepath.Join(j.apps, filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if err != nil {
		j.t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(oldNew); i += 2 {
		if strings.Count(s, oldNew[i]) != 1 {
			j.t.Fatalf("%s: %q is not there exactly once", rel, oldNew[i])
		}
		s = strings.Replace(s, oldNew[i], oldNew[i+1], 1)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		j.t.Fatal(err)
	}
}

// gitIn runs the git CLI in dir as the developer, dated now.
func (j *journey) gitIn(dir string, args ...string) string {
	j.t.Helper()
	now := time.Now().UTC().Format(time.RFC3339)
	out, err := gittest.RunGit(dir, []string{
		"GIT_AUTHOR_NAME=Dana Developer", "GIT_AUTHOR_EMAIL=dana@example.com",
		"GIT_COMMITTER_NAME=Dana Developer", "GIT_COMMITTER_EMAIL=dana@example.com",
		"GIT_AUTHOR_DATE=" + now, "GIT_COMMITTER_DATE=" + now,
	}, args...)
	if err != nil {
		j.t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// env is the environment of every program run: a CI job's, with the GitHub
// token and API address pointing at the fake.
func (j *journey) env() []string {
	return append([]string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + j.home,
		"TMPDIR=" + os.TempDir(),
		"GITHUB_TOKEN=" + ghToken,
		"GITHUB_API_URL=" + j.gh.URL,
		"GIT_AUTHOR_NAME=Dana Developer", "GIT_AUTHOR_EMAIL=dana@example.com",
	}, j.runEnv...)
}

// run runs one of the built programs in dir.
func (j *journey) run(dir, name string, args ...string) result {
	j.t.Helper()
	ctx, cancel := context.WithTimeout(j.ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, name), args...)
	cmd.Dir = dir
	cmd.Env = j.env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		j.t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return r
}

// must runs a program and fails the test unless it exits 0.
func (j *journey) must(dir, name string, args ...string) result {
	j.t.Helper()
	r := j.run(dir, name, args...)
	if r.code != 0 {
		j.t.Fatalf("%s %s: %s", name, strings.Join(args, " "), r)
	}
	return r
}

// pass logs that a step of the journey passed.
func (j *journey) pass(step int, what string) {
	j.t.Helper()
	j.t.Logf("--- step %d: %s", step, what)
}

// --- the apps repository and its pull requests ---

// openAppsPR pushes the developer's branch and opens its pull request;
// it returns the number and the base and head commits.
func (j *journey) openAppsPR(branch, title string) (int, string, string) {
	j.t.Helper()
	j.gitIn(j.apps, "push", "-q", "origin", branch)
	n := j.gh.AddPullRequest(appsRepo, githubtest.PullRequest{Head: branch, Base: "main", Title: title, User: "dana"})
	return n, j.gitIn(j.apps, "rev-parse", "origin/main"), j.gitIn(j.apps, "rev-parse", "HEAD")
}

// review runs render review as the pull request's CI job does and returns
// the comment it posted.
func (j *journey) review(pr int, base, head string) string {
	j.t.Helper()
	comments := fmt.Sprintf("/repos/%s/issues/%d/comments", appsRepo, pr)
	j.gh.Expect("GET", comments)
	j.gh.Expect("POST", comments)
	j.must(j.apps, "render", "review", "--base", base, "--head", head, "--pr", fmt.Sprint(pr), "--github-repo", appsRepo, ".")
	cs := j.gh.Comments(appsRepo, pr)
	if len(cs) != 1 {
		j.t.Fatalf("pull request #%d has %d comments, want the review's one", pr, len(cs))
	}
	return cs[0].Body
}

// mergeApps fast-forwards main to the branch, on the developer's clone and
// the server, and marks the pull request merged; it returns main's commit.
func (j *journey) mergeApps(pr int, branch string) string {
	j.t.Helper()
	j.gitIn(j.apps, "checkout", "-q", "main")
	j.gitIn(j.apps, "merge", "-q", "--ff-only", branch)
	j.gitIn(j.apps, "push", "-q", "origin", "main")
	if !j.gh.MergePullRequest(appsRepo, pr) {
		j.t.Fatalf("apps pull request #%d is not open", pr)
	}
	return j.gitIn(j.apps, "rev-parse", "HEAD")
}

// --- the fleet repository ---

// renderFleetPR runs render on the merged apps repository as the merge's CI
// job does: it builds, pins, commits the fleet to the render branch and
// opens the fleet pull request. It returns the pull request's number.
func (j *journey) renderFleetPR() int {
	j.t.Helper()
	j.gh.Expect("GET", "/repos/"+fleetRepo+"/pulls").Query("state", "open").Query("head", "acme:"+prBranch).Query("base", "main")
	j.gh.Expect("POST", "/repos/"+fleetRepo+"/pulls").JSONField("head", prBranch).JSONField("base", "main")
	r := j.must(j.apps, "render", "--github-repo", fleetRepo, ".")
	prs := j.gh.PullRequests(fleetRepo)
	last := prs[len(prs)-1]
	if last.State != "open" || !strings.Contains(r.stderr, fmt.Sprintf("fleet pull request #%d opened", last.Number)) {
		j.t.Fatalf("render did not open fleet pull request #%d: %s", last.Number, r)
	}
	return last.Number
}

// mergeFleet merges the fleet pull request on the server (a fast-forward
// of main to the render branch), asks Flux to fetch at once, and returns
// the Flux revision of main.
func (j *journey) mergeFleet(pr int) string {
	j.t.Helper()
	j.gitIn(j.fleetBare, "fetch", "-q", ".", "refs/heads/"+prBranch+":refs/heads/main")
	if !j.gh.MergePullRequest(fleetRepo, pr) {
		j.t.Fatalf("fleet pull request #%d is not open", pr)
	}
	j.requestReconcile()
	return "main@sha1:" + j.gitIn(j.fleetBare, "rev-parse", "refs/heads/main")
}

// fleetTree returns the files under fleet/ at ref of the fleet repository.
func (j *journey) fleetTree(ref string) map[string]string {
	j.t.Helper()
	files := map[string]string{}
	for _, p := range strings.Fields(j.gitIn(j.fleetBare, "ls-tree", "-r", "--name-only", ref, "--", "fleet")) {
		out, err := gittest.RunGit(j.fleetBare, nil, "show", ref+":"+p)
		if err != nil {
			j.t.Fatal(err)
		}
		files[p] = out
	}
	return files
}

// cloneFleet checks the fleet repository out at branch, as the fleet pull
// request's CI job does.
func (j *journey) cloneFleet(branch string) string {
	j.t.Helper()
	dir := filepath.Join(j.t.TempDir(), "fleet")
	j.gitIn("", "clone", "-q", "--branch", branch, j.fleetURL, dir)
	return dir
}

// --- Flux ---

// bootstrapFile holds the cluster's GitRepository and root Kustomization.
const bootstrapFile = "fleet/clusters/" + clusterName + "/flux-system/gotk-sync.yaml"

// bootstrapFlux applies what the platform engineer committed to the fleet
// once per cluster, as `flux bootstrap` does: the GitRepository of the
// fleet and the root Kustomization that applies clusters/<cluster>/ (the
// apps' and projects' Flux Kustomizations, and itself).
func (j *journey) bootstrapFlux() {
	j.t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(j.gitIn(j.fleetBare, "show", "main:"+bootstrapFile)), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			j.t.Fatal(err)
		}
		if err := j.c.Client.Create(j.ctx, &u); err != nil {
			j.t.Fatal(err)
		}
	}
}

// requestReconcile asks source-controller to fetch the fleet now rather
// than at its next interval (what `flux reconcile source git` does).
func (j *journey) requestReconcile() {
	j.t.Helper()
	var repo sourcev1.GitRepository
	if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: fluxNS, Name: "flux-system"}, &repo); err != nil {
		if apierrors.IsNotFound(err) {
			return // not bootstrapped yet
		}
		j.t.Fatal(err)
	}
	patch := client.MergeFrom(repo.DeepCopy())
	if repo.Annotations == nil {
		repo.Annotations = map[string]string{}
	}
	repo.Annotations[meta.ReconcileRequestAnnotation] = time.Now().Format(time.RFC3339Nano)
	if err := j.c.Client.Patch(j.ctx, &repo, patch); err != nil {
		j.t.Fatal(err)
	}
}

// forwardEvents makes notification-controller post Flux's events, signed,
// to the webhook: the Secret holding the HMAC key, a generic-hmac Provider
// and an Alert for the root Kustomization (flux-system) and the project's
// Kustomizations, OCIRepositories and HelmReleases (its namespace).
func (j *journey) forwardEvents() {
	j.t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "fleetwright-webhook-hmac", Namespace: fluxNS},
		StringData: map[string]string{"token": hmacKey},
	}
	provider := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "notification.toolkit.fluxcd.io/v1beta3",
		"kind":       "Provider",
		"metadata":   map[string]any{"name": "fleetwright", "namespace": fluxNS},
		"spec": map[string]any{
			"type":      "generic-hmac",
			"address":   j.hook.URL + "/hooks/flux",
			"secretRef": map[string]any{"name": "fleetwright-webhook-hmac"},
		},
	}}
	alert := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "notification.toolkit.fluxcd.io/v1beta3",
		"kind":       "Alert",
		"metadata":   map[string]any{"name": "fleetwright", "namespace": fluxNS},
		"spec": map[string]any{
			"providerRef":   map[string]any{"name": "fleetwright"},
			"eventSeverity": "info",
			// notification-controller matches an event source's namespace
			// literally: HelmReleases need one source per project namespace.
			"eventSources": []any{
				map[string]any{"kind": "Kustomization", "name": "*"},
				map[string]any{"kind": "Kustomization", "name": "*", "namespace": project},
				map[string]any{"kind": "OCIRepository", "name": "*", "namespace": project},
				map[string]any{"kind": "HelmRelease", "name": "*", "namespace": project},
			},
		},
	}}
	for _, o := range []client.Object{secret, provider, alert} {
		if err := j.c.Client.Create(j.ctx, o); err != nil {
			j.t.Fatal(err)
		}
	}
}

// eventually calls check every half second until it returns nil; after
// timeout it fails the test with check's last error.
func (j *journey) eventually(what string, timeout time.Duration, check func() error) {
	j.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || j.ctx.Err() != nil {
			j.t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		select {
		case <-j.ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// kustomizationReady reports whether the Kustomization applied the fleet
// commit rev and is Ready: rev itself for one that reads the fleet's
// GitRepository; for one that reads an OCIRepository (a component's, or a
// project's project-<p>), the artifact that OCIRepository pins once the
// Kustomization that applies it is Ready at rev in turn.
func (j *journey) kustomizationReady(name, rev string) error {
	var k kustomizev1.Kustomization
	if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: kustomizationNS(name), Name: name}, &k); err != nil {
		return err
	}
	rev, err := j.sourceRevision(&k, rev)
	if err != nil {
		return err
	}
	ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
	switch {
	case k.Status.ObservedGeneration != k.Generation:
		return fmt.Errorf("Kustomization %s: generation %d not observed yet", name, k.Generation)
	case k.Status.LastAppliedRevision != rev:
		return fmt.Errorf("Kustomization %s: applied %q, want %q (%s)", name, k.Status.LastAppliedRevision, rev, conditionText(ready))
	case ready == nil || ready.Status != metav1.ConditionTrue:
		return fmt.Errorf("Kustomization %s: not Ready (%s)", name, conditionText(ready))
	}
	return nil
}

// sourceRevision returns the revision k applies at the fleet commit rev:
// rev, or the digest its OCIRepository pins at rev. That pin is the one of
// rev only once the Kustomization that applied the OCIRepository (its
// kustomize.toolkit.fluxcd.io/name label: the root Kustomization, or the
// project's, which reads an OCIRepository of its own applied by the root)
// is Ready at rev; until then it is an error.
func (j *journey) sourceRevision(k *kustomizev1.Kustomization, rev string) (string, error) {
	if k.Spec.SourceRef.Kind != sourcev1.OCIRepositoryKind {
		return rev, nil
	}
	ns := k.Spec.SourceRef.Namespace
	if ns == "" {
		ns = k.Namespace
	}
	var o sourcev1.OCIRepository
	if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: ns, Name: k.Spec.SourceRef.Name}, &o); err != nil {
		return "", err
	}
	owner, ownerNS := o.Labels[kustomizeName], o.Labels[kustomizeNamespace]
	switch {
	case owner == "" || ownerNS != kustomizationNS(owner):
		return "", fmt.Errorf("OCIRepository %s/%s is applied by no Kustomization of the fleet (labels %v)", o.Namespace, o.Name, o.Labels)
	case owner == k.Name:
		return "", fmt.Errorf("OCIRepository %s/%s is applied by the Kustomization that reads it", o.Namespace, o.Name)
	}
	if err := j.kustomizationReady(owner, rev); err != nil {
		return "", fmt.Errorf("the source of %s: %w", k.Name, err)
	}
	// Read again: the pin seen above may predate the owner's apply.
	if err := j.c.Client.Get(j.ctx, client.ObjectKeyFromObject(&o), &o); err != nil {
		return "", err
	}
	if o.Spec.Reference == nil || o.Spec.Reference.Digest == "" {
		return "", fmt.Errorf("OCIRepository %s pins no digest", o.Name)
	}
	return o.Spec.Reference.Digest, nil
}

// kustomizationNS is the namespace of the journey's Kustomization name:
// the project's for the project's and its apps' (render puts them there),
// flux-system for the root.
func kustomizationNS(name string) string {
	if strings.HasPrefix(name, project+"-") || name == "project-"+project {
		return project
	}
	return fluxNS
}

// The labels kustomize-controller puts on what a Kustomization applies.
const (
	kustomizeName      = "kustomize.toolkit.fluxcd.io/name"
	kustomizeNamespace = "kustomize.toolkit.fluxcd.io/namespace"
)

// waitApplied waits until Flux applied rev to every Kustomization of the
// app and the api Deployment finished rolling out with want ready
// replicas.
func (j *journey) waitApplied(rev string, want int32) *appsv1.Deployment {
	j.t.Helper()
	var d appsv1.Deployment
	j.eventually("Flux applies "+rev, 3*time.Minute, func() error {
		for _, k := range append([]string{"fleet-" + clusterName}, appKustomizations...) {
			if err := j.kustomizationReady(k, rev); err != nil {
				return err
			}
		}
		if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: project, Name: appName + "-api"}, &d); err != nil {
			return err
		}
		return rolledOut(&d, want)
	})
	return &d
}

// rolledOut reports whether the Deployment runs want replicas, all of its
// latest template, all available.
func rolledOut(d *appsv1.Deployment, want int32) error {
	s := d.Status
	if d.Spec.Replicas == nil || *d.Spec.Replicas != want || s.ObservedGeneration < d.Generation ||
		s.Replicas != want || s.UpdatedReplicas != want || s.AvailableReplicas != want || s.ReadyReplicas != want {
		spec := "unset"
		if d.Spec.Replicas != nil {
			spec = fmt.Sprint(*d.Spec.Replicas)
		}
		return fmt.Errorf("Deployment %s: spec.replicas %s, status %d/%d updated %d available %d ready (generation %d, observed %d), want %d",
			d.Name, spec, s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, s.ReadyReplicas, d.Generation, s.ObservedGeneration, want)
	}
	return nil
}

func conditionText(c *metav1.Condition) string {
	if c == nil {
		return "no Ready condition"
	}
	return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
}

// fluxState describes the Flux objects and the app's workloads, for a
// failing test.
func (j *journey) fluxState() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	var repos sourcev1.GitRepositoryList
	if err := j.c.Client.List(ctx, &repos); err == nil {
		for _, r := range repos.Items {
			rev := ""
			if r.Status.Artifact != nil {
				rev = r.Status.Artifact.Revision
			}
			fmt.Fprintf(&b, "GitRepository %s/%s: artifact %s; %s\n", r.Namespace, r.Name, rev,
				conditionText(apimeta.FindStatusCondition(r.Status.Conditions, meta.ReadyCondition)))
		}
	}
	var ocis sourcev1.OCIRepositoryList
	if err := j.c.Client.List(ctx, &ocis); err == nil {
		for _, r := range ocis.Items {
			rev, pin := "", ""
			if r.Status.Artifact != nil {
				rev = r.Status.Artifact.Revision
			}
			if r.Spec.Reference != nil {
				pin = r.Spec.Reference.Digest
			}
			fmt.Fprintf(&b, "OCIRepository %s/%s: pins %s, artifact %s; %s\n", r.Namespace, r.Name, pin, rev,
				conditionText(apimeta.FindStatusCondition(r.Status.Conditions, meta.ReadyCondition)))
		}
	}
	var ks kustomizev1.KustomizationList
	if err := j.c.Client.List(ctx, &ks); err == nil {
		for _, k := range ks.Items {
			fmt.Fprintf(&b, "Kustomization %s: generation %d/%d applied %s attempted %s; %s\n", k.Name, k.Status.ObservedGeneration, k.Generation,
				k.Status.LastAppliedRevision, k.Status.LastAttemptedRevision, conditionText(apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)))
		}
	}
	var hrs helmv2.HelmReleaseList
	if err := j.c.Client.List(ctx, &hrs); err == nil {
		for _, h := range hrs.Items {
			fmt.Fprintf(&b, "HelmRelease %s/%s: %s\n", h.Namespace, h.Name, conditionText(apimeta.FindStatusCondition(h.Status.Conditions, meta.ReadyCondition)))
		}
	}
	var ds appsv1.DeploymentList
	if err := j.c.Client.List(ctx, &ds, client.InNamespace(project)); err == nil {
		for _, d := range ds.Items {
			spec := "unset"
			if d.Spec.Replicas != nil {
				spec = fmt.Sprint(*d.Spec.Replicas)
			}
			fmt.Fprintf(&b, "Deployment %s: generation %d/%d, replicas %s: %d updated %d available %d ready %d\n", d.Name,
				d.Status.ObservedGeneration, d.Generation, spec, d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas, d.Status.ReadyReplicas)
		}
	}
	var pods corev1.PodList
	if err := j.c.Client.List(ctx, &pods, client.InNamespace(project)); err == nil {
		for _, p := range pods.Items {
			fmt.Fprintf(&b, "Pod %s: %s on %q\n", p.Name, p.Status.Phase, p.Spec.NodeName)
		}
	}
	return b.String()
}

func (j *journey) githubDeployments() string {
	var b strings.Builder
	for _, d := range j.gh.Deployments(fleetRepo) {
		fmt.Fprintf(&b, "#%d %s %s:", d.ID, d.Environment, d.Ref)
		for _, s := range d.Statuses {
			fmt.Fprintf(&b, " %s(%q %s)", s.State, s.Description, s.EnvironmentURL)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// --- the webhook ---

// webhookProcess is the running webhook program.
type webhookProcess struct {
	URL  string
	cmd  *exec.Cmd
	log  string // its standard error
	done chan struct{}
}

// startWebhook runs the webhook as an operator would next to the cluster:
// signed Flux events in, history in SQLite, probes against the cluster and
// the ingress stand-in, GitHub deployment statuses to the fake. extra are
// more flags.
func (j *journey) startWebhook(extra ...string) {
	j.t.Helper()
	dir := j.t.TempDir()
	secret := func(name, value string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(value+"\n"), 0o600); err != nil {
			j.t.Fatal(err)
		}
		return p
	}
	w := &webhookProcess{log: filepath.Join(dir, "webhook.log"), done: make(chan struct{})}
	logFile, err := os.Create(w.log)
	if err != nil {
		j.t.Fatal(err)
	}
	defer logFile.Close()
	w.cmd = exec.Command(filepath.Join(binDir, "webhook"),
		"-listen", "127.0.0.1:0",
		"-sqlite", filepath.Join(dir, "history.db"),
		"-hmac-key-file", secret("hmac-key", hmacKey),
		"-api-token-file", secret("api-token", apiToken),
		"-kubeconfig", j.c.Kubeconfig,
		"-tls-ca-bundle", secret("ca.pem", string(j.ing.CAPEM)),
		"-ingress-address", j.ing.Addr,
		"-github-token-file", secret("github-token", ghToken),
		"-github-repo", fleetRepo,
		"-github-api-url", j.gh.URL,
		"-recheck-interval", "10s",
		"-shutdown-timeout", "5s",
		"-log-level", "debug",
	)
	w.cmd.Args = append(w.cmd.Args, j.webhookArgs...)
	w.cmd.Args = append(w.cmd.Args, extra...)
	w.cmd.Env = j.env()
	w.cmd.Stdout, w.cmd.Stderr = logFile, logFile
	if err := w.cmd.Start(); err != nil {
		j.t.Fatal(err)
	}
	go func() {
		_ = w.cmd.Wait()
		close(w.done)
	}()
	j.hook = w
	j.t.Cleanup(func() {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.done:
		case <-time.After(15 * time.Second):
			_ = w.cmd.Process.Kill()
			<-w.done
		}
		if j.t.Failed() {
			fmt.Fprintf(j.t.Output(), "==> webhook (last 80 lines of %s) <==\n%s\n", w.log, tail(w.log, 80))
		}
	})
	listening := regexp.MustCompile(`msg=listening addr=(\S+)`)
	j.eventually("the webhook listens", 30*time.Second, func() error {
		select {
		case <-w.done:
			j.t.Fatalf("the webhook exited: %s", tail(w.log, 20))
		default:
		}
		b, err := os.ReadFile(w.log)
		if err != nil {
			return err
		}
		m := listening.FindSubmatch(b)
		if m == nil {
			return errors.New("no listening line yet")
		}
		w.URL = "http://" + string(m[1])
		return nil
	})
}

// get reads one answer of the webhook's API into v.
func (j *journey) get(path string, v any) error {
	ctx, cancel := context.WithTimeout(j.ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.hook.URL+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, bytes.TrimSpace(body))
	}
	return json.Unmarshal(body, v)
}

const appPath = "/api/v1/apps/" + project + "/" + appName

// waitPhase waits until the app's current deployment is the one of rev and
// in phase, and returns its status.
func (j *journey) waitPhase(rev, phase string, timeout time.Duration) webhook.DeployStatus {
	j.t.Helper()
	return j.waitAppPhase(appPath, rev, phase, timeout)
}

// waitAppPhase waits until the current deployment of the app at path (in
// the webhook's API) is of rev and in phase, and returns its status.
func (j *journey) waitAppPhase(path, rev, phase string, timeout time.Duration) webhook.DeployStatus {
	j.t.Helper()
	var ds webhook.DeployStatus
	j.eventually(fmt.Sprintf("the webhook shows %s %s of %s", rev, phase, path), timeout, func() error {
		ds = webhook.DeployStatus{}
		if err := j.get(path+"/deploy-status", &ds); err != nil {
			return err
		}
		if ds.Revision != rev || string(ds.Phase) != phase {
			return fmt.Errorf("current deployment %d: %s %s: %s", ds.DeploymentID, ds.Revision, ds.Phase, ds.Message)
		}
		return nil
	})
	return ds
}

// deploymentRecord is one deployment of the webhook's history.
type deploymentRecord struct {
	ID           int64  `json:"id"`
	Revision     string `json:"revision"`
	SpecRevision string `json:"spec_revision"`
	Phase        string `json:"phase"`
	Message      string `json:"message"`
	LiveURL      string `json:"live_url"`
}

// history returns the app's deployments, newest first.
func (j *journey) history() []deploymentRecord {
	j.t.Helper()
	return j.appHistory(appPath)
}

// appHistory returns the deployments of the app at path (in the webhook's
// API), newest first.
func (j *journey) appHistory(path string) []deploymentRecord {
	j.t.Helper()
	var page struct {
		Deployments []deploymentRecord `json:"deployments"`
	}
	if err := j.get(path+"/deployments?limit=100", &page); err != nil {
		j.t.Fatal(err)
	}
	return page.Deployments
}

// githubDeployment waits until the GitHub deployment of the fleet commit
// of rev has a status in state and returns it.
func (j *journey) githubDeployment(rev, state string) (githubtest.Deployment, githubtest.DeploymentStatus) {
	j.t.Helper()
	commit := rev[strings.LastIndex(rev, ":")+1:]
	var (
		dep githubtest.Deployment
		st  githubtest.DeploymentStatus
	)
	j.eventually(fmt.Sprintf("a GitHub deployment status %s for %s", state, commit), time.Minute, func() error {
		var seen []string
		for _, d := range j.gh.Deployments(fleetRepo) {
			if d.Ref != commit {
				continue
			}
			if last, ok := d.LastStatus(); ok && last.State == state {
				dep, st = d, last
				return nil
			}
			seen = append(seen, fmt.Sprintf("deployment %d: %+v", d.ID, d.Statuses))
		}
		if len(seen) == 0 {
			return fmt.Errorf("no GitHub deployment of %s yet", commit)
		}
		return errors.New(strings.Join(seen, "; "))
	})
	return dep, st
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = slices.Delete(lines, 0, 1)
		}
	}
	return strings.Join(lines, "\n")
}

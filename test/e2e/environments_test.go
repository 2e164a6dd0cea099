package e2e

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/webhook"
	"github.com/fleetwright/fleetwright/test/cluster"
)

// The environments journey's second cluster: production's. Staging runs
// on the journey's cluster (clusterName).
const (
	prodCluster = "journey-prod"
	prodHost    = appName + ".journey.test" // production's own host (its override)
	promoteHead = "fleetwright/promote-production"
)

// envPlatform is the platform of the environments journey: staging on the
// journey's cluster, production on its own, changed only by promotion.
const envPlatform = `# What the platform team owns: two environments, each on its cluster.
apps_domain: apps.journey.test
registry: {{.Registry}}/fleet
clusters:
  - name: ` + clusterName + `
  - name: ` + prodCluster + `
    production: true
environments:
  - {name: staging, cluster: ` + clusterName + `}
  - {name: production, cluster: ` + prodCluster + `, promote_from: staging}
fleet:
  repo: {{.FleetRepo}}
  branch: main
  mode: pull-request
  path: fleet
  artifacts: {repository: "{{.Registry}}/fleet-artifacts", insecure: true}
project_ids:
  b2c3d4e5-0002-0000-0000-000000000000: my-project
`

// envApp is the app: one workload built from its Dockerfile, with
// production's replicas and host as overrides.
const envApp = `{
  "name": "my-api",
  "project_id": "b2c3d4e5-0002-0000-0000-000000000000",
  "components": [
    {
      "name": "api",
      "type": "workload",
      "workload_spec": {
        "build_mode": "dockerfile",
        "build": {"context": "api"},
        "replicas": 2,
        "port": 8000,
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
        "ingress": {"enabled": true, "path": "/"}
      }
    }
  ],
  "timeout": "3m",
  "environments": {
    "production": {
      "components": {"api": {"workload_spec": {"replicas": 3, "ingress": {"host": "` + prodHost + `"}}}}
    }
  }
}
`

func (j *journey) envFile(env, rel string) string {
	c := clusterName
	if env == "production" {
		c = prodCluster
	}
	return "fleet/apps/" + c + "/" + project + "/" + appName + "/" + rel
}

// TestEnvironmentsJourney walks an app through staging and production,
// each on its own cluster with the real Flux and its multi-tenancy lockdown
// (the fleet's sources are artifacts, fleet.artifacts): a merge deploys
// staging and
// leaves production alone; the one webhook, reading both clusters, sees
// staging's release running with every check green on staging's cluster;
// render promote then opens the promotion pull request (checked by the
// strict GitHub fake, with its comment), and once it is merged production
// runs exactly staging's digests, checked on production's cluster and
// through its ingress; GitHub's deployments are in the environments' names.
// A release that fails in staging moves staging only, and its promotion is
// refused.
func TestEnvironmentsJourney(t *testing.T) {
	began := time.Now()
	j := newJourney(t)
	registry := j.reg.Host() + "/fleet/" + project + "/" + appName + "-api"

	// 1. The platform declares the environments; the app is merged.
	writeApp := func(rel, content string) {
		t.Helper()
		p := filepath.Join(j.apps, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmpl := filepath.Join(t.TempDir(), "platform.yaml.tmpl")
	if err := os.WriteFile(tmpl, []byte(envPlatform), 0o644); err != nil {
		t.Fatal(err)
	}
	writeApp("platform.yaml", j.template(tmpl))
	writeApp(appFile, envApp)
	for _, f := range []string{"Dockerfile", "index.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", "apps-repo", "apps", project, appName, "api", f))
		if err != nil {
			t.Fatal(err)
		}
		writeApp("apps/"+project+"/"+appName+"/api/"+f, string(b))
	}
	j.gitIn(j.apps, "add", "-A")
	j.gitIn(j.apps, "commit", "-q", "-m", "Environments: staging, then production; add my-api")
	j.gitIn(j.apps, "push", "-q", "origin", "main")
	spec1 := j.gitIn(j.apps, "rev-parse", "HEAD")
	fleetPR := j.renderFleetPR()
	if r := j.must(j.apps, "render", "validate", "."); !strings.Contains(r.stderr, "valid") {
		t.Errorf("render validate: %s", r)
	}
	j.clusterUp()
	rev1 := j.mergeFleet(fleetPR)
	tree1 := j.fleetTree("main")
	if _, ok := tree1[j.envFile("staging", "api/deployment-my-api-api.yaml")]; !ok {
		t.Fatalf("the merge did not render staging: %q", slices.Sorted(maps.Keys(tree1)))
	}
	for p := range tree1 {
		if strings.Contains(p, prodCluster) {
			t.Errorf("the merge rendered production's %s: production changes only by promotion", p)
		}
	}
	image1 := j.envImage("main", "staging", registry)
	j.pass(1, "a merge rendered staging ("+image1+") and nothing of production")

	// 2. The second cluster, production's: what it costs.
	started := time.Now()
	prod, err := cluster.Start(j.ctx)
	if err != nil {
		t.Fatalf("starting production's cluster: %v", err)
	}
	startTook := time.Since(started)
	t.Cleanup(func() {
		if t.Failed() {
			fmt.Fprintf(t.Output(), "==> production's cluster <==\n%s\n", j.on(prod).fluxState())
			prod.WriteLogsTo(t.Output(), 40)
		}
		if err := prod.Stop(); err != nil {
			t.Error(err)
		}
	})
	rss := residentMiB(prod.PIDs())
	t.Logf("the second cluster started in %s; resident memory right after: %d MiB (%s)", startTook.Round(10*time.Millisecond), rss.total, rss.each)
	j.pass(2, fmt.Sprintf("production's cluster started in %s, %d MiB resident", startTook.Round(100*time.Millisecond), rss.total))

	// 3. One webhook reads both clusters; each cluster's Flux posts to it.
	stgIngress := startIngress(t, j.c.Client, host)
	prodIngress := startIngress(t, prod.Client, prodHost)
	j.ing = stgIngress
	j.ing.CAPEM = append(slices.Clone(stgIngress.CAPEM), prodIngress.CAPEM...)
	envs := []string{"staging", "production"}
	j.gh.Expect("POST", "/repos/"+fleetRepo+"/deployments").Between(2, 40).Body(func(b map[string]any) error {
		env, _ := b["environment"].(string)
		p, _ := b["payload"].(map[string]any)
		if !slices.Contains(envs, env) || p["environment"] != env || p["project"] != project || p["app"] != appName {
			return fmt.Errorf("a deployment in environment %q, payload %v: want staging or production, named in the payload", env, p)
		}
		return nil
	})
	j.gh.Expect("POST", "/repos/"+fleetRepo+"/deployments/*/statuses").Between(2, 200)
	platformFile := filepath.Join(t.TempDir(), "platform.yaml")
	if err := os.WriteFile(platformFile, []byte(j.template(tmpl)), 0o644); err != nil {
		t.Fatal(err)
	}
	j.startWebhook("-cluster-name", clusterName, "-platform-file", platformFile, "-environments", "staging,production",
		"-cluster-kubeconfig", prodCluster+"="+prod.Kubeconfig, "-cluster-ingress-address", prodCluster+"="+prodIngress.Addr)
	pj := j.on(prod)
	j.forwardEvents()
	pj.forwardEvents()
	j.bootstrapFlux()
	pj.bootstrapProd()
	j.waitEnvApplied("staging", rev1, 2)
	stg := j.waitEnvPhase("staging", rev1, "running")
	checkGreen(t, "staging", stg)
	if stg.LiveURL != "https://"+host+"/" {
		t.Errorf("staging's live URL = %q", stg.LiveURL)
	}
	if err := prod.Client.Get(j.ctx, client.ObjectKey{Namespace: project, Name: appName + "-api"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("production's cluster has the app before any promotion (%v)", err)
	}
	j.pass(3, "Flux applied staging on its cluster; the webhook, reading both clusters, shows it running with every check green")

	// 4. Promote: the webhook's verdict is running, so the promotion pull
	// request opens, with its comment.
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte(apiToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	promote := func() result {
		return j.run(j.apps, "render", "promote", project+"/"+appName, "--to", "production", "--webhook", j.hook.URL, "--token-file", token, "--github-repo", fleetRepo)
	}
	promotePR := fleetPR + 1
	j.gh.Expect("GET", "/repos/"+fleetRepo+"/pulls").Query("state", "open").Query("head", "acme:"+promoteHead).Query("base", "main")
	j.gh.Expect("POST", "/repos/"+fleetRepo+"/pulls").JSONField("head", promoteHead).JSONField("base", "main").
		JSONField("title", "fleetwright: promote "+project+"/"+appName+" to production")
	comments := fmt.Sprintf("/repos/%s/issues/%d/comments", fleetRepo, promotePR)
	j.gh.Expect("GET", comments)
	j.gh.Expect("POST", comments)
	r := promote()
	if r.code != 0 || !strings.Contains(r.stderr, fmt.Sprintf("promotion pull request #%d", promotePR)) {
		t.Fatalf("render promote: %s", r)
	}
	prs := j.gh.PullRequests(fleetRepo)
	pr := prs[len(prs)-1]
	if pr.Number != promotePR || !strings.Contains(pr.Body, "Promoted-Spec-Revision: "+project+"/"+appName+" "+spec1) ||
		!regexp.MustCompile(`deployment \d+ running, every check green`).MatchString(pr.Body) {
		t.Errorf("the promotion pull request #%d:\n%s", pr.Number, pr.Body)
	}
	cs := j.gh.Comments(fleetRepo, promotePR)
	if len(cs) != 1 {
		t.Fatalf("the promotion pull request has %d comments, want one", len(cs))
	}
	for _, want := range []string{"## fleetwright: promotion from staging to production", "Environments: staging, then production; add my-api",
		"**1 app(s) added, 0 changed, 0 removed.**", "| `" + prodCluster + "/" + project + "/" + appName + "` | added |",
		"added — Deployment my-project/my-api-api", "added — Ingress my-project/my-api-api", digestOf(image1)} {
		if !strings.Contains(cs[0].Body, want) {
			t.Errorf("the promotion comment lacks %q:\n%s", want, cs[0].Body)
		}
	}
	if strings.Contains(cs[0].Body, "`"+clusterName+"/"+project+"/"+appName+"`") {
		t.Errorf("the promotion comment changes staging's copy:\n%s", cs[0].Body)
	}
	j.pass(4, fmt.Sprintf("render promote asked the webhook, found staging's release running, opened promotion pull request #%d with its comment", promotePR))

	// 5. Merged: production runs exactly staging's digests, checked on
	// its own cluster and through its own ingress.
	rev2 := j.mergeBranch(promoteHead, promotePR)
	pj.requestReconcile()
	tree2 := j.fleetTree("main")
	if image := j.envImage("main", "production", registry); image != image1 {
		t.Errorf("production's fleet runs %s, want staging's %s", image, image1)
	}
	for p, b := range tree1 {
		if tree2[p] != b {
			t.Errorf("the promotion changed staging's %s", p)
		}
	}
	d := pj.waitEnvApplied("production", rev2, 3)
	if got := d.Spec.Template.Spec.Containers[0].Image; got != image1 {
		t.Errorf("production's Deployment runs %s, want staging's %s", got, image1)
	}
	var sd appsv1.Deployment
	if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: project, Name: appName + "-api"}, &sd); err != nil || digestOf(sd.Spec.Template.Spec.Containers[0].Image) != digestOf(d.Spec.Template.Spec.Containers[0].Image) {
		t.Errorf("staging runs %s (%v), production %s: not the same digest", sd.Spec.Template.Spec.Containers[0].Image, err, d.Spec.Template.Spec.Containers[0].Image)
	}
	pds := j.waitEnvPhase("production", rev2, "running")
	checkGreen(t, "production", pds)
	if pds.LiveURL != "https://"+prodHost+"/" {
		t.Errorf("production's live URL = %q, want its own host's", pds.LiveURL)
	}
	if !slices.Contains(prodIngress.Seen(), prodHost+" 200") || slices.ContainsFunc(stgIngress.Seen(), func(s string) bool { return strings.HasPrefix(s, prodHost+" ") }) {
		t.Errorf("production's probes: its ingress served %q, staging's %q; want them all at production's", prodIngress.Seen(), stgIngress.Seen())
	}
	st := j.envGitHubDeployment(rev2, "production", "success")
	deps := map[string]bool{}
	for _, gd := range j.gh.Deployments(fleetRepo) {
		deps[gd.Environment] = true
	}
	if !deps["staging"] || !deps["production"] || len(deps) != 2 || st.EnvironmentURL != "https://"+prodHost+"/" {
		t.Errorf("GitHub deployments in environments %v, production's status %+v", deps, st)
	}
	j.pass(5, "merged: production runs staging's digest "+digestOf(image1)+" on its cluster; the webhook checked it there and through its ingress; GitHub has staging's and production's deployments")

	// 6. A release that fails in staging: staging moves, production stays,
	// and its promotion is refused.
	j.edit(appFile, `"cpu": "100m"`, `"cpu": "200"`, `"timeout": "3m"`, `"timeout": "20s"`)
	j.gitIn(j.apps, "commit", "-q", "-am", "Give the api 200 CPUs and a 20s timeout")
	j.gitIn(j.apps, "push", "-q", "origin", "main")
	rev3 := j.mergeFleet(j.renderFleetPR())
	pj.requestReconcile()
	tree3 := j.fleetTree("main")
	for p, b := range tree2 {
		if strings.Contains(p, "/"+prodCluster+"/") && tree3[p] != b {
			t.Errorf("a merge changed production's %s", p)
		}
	}
	j.waitEnvPhase("staging", rev3, "failed")
	r = promote()
	if r.code != 1 || !strings.Contains(r.stderr, "not promoted") || !strings.Contains(r.stderr, "failed") {
		t.Errorf("render promote of the failed release: %s", r)
	}
	if len(j.gh.PullRequests(fleetRepo)) != promotePR+1 {
		t.Errorf("the refused promotion opened a pull request: %+v", j.gh.PullRequests(fleetRepo))
	}
	var now appsv1.Deployment
	if err := prod.Client.Get(j.ctx, client.ObjectKeyFromObject(d), &now); err != nil || now.Spec.Template.Spec.Containers[0].Image != image1 {
		t.Errorf("production's Deployment after staging's failure: %v %v", now.Spec.Template.Spec.Containers, err)
	}
	// Production's cluster applied the new fleet commit; its apps' Flux
	// objects read their artifacts, whose digests the commit left as they
	// were. Once Flux there has applied it, and the webhook has heard of
	// staging's failure at the same commit, production's deployment is
	// still the promotion's, running, every check green.
	j.eventually("production's cluster applies "+rev3, 3*time.Minute, func() error {
		return pj.kustomizationReady("fleet-"+prodCluster, rev3)
	})
	after := j.waitEnvPhase("production", rev2, "running")
	checkGreen(t, "production at "+rev2, after)
	if after.DeploymentID != pds.DeploymentID {
		t.Errorf("production's current deployment is %d after the fleet commit %s, want the promotion's %d", after.DeploymentID, rev3, pds.DeploymentID)
	}
	var page struct {
		Deployments []deploymentRecord `json:"deployments"`
	}
	if err := j.get(appPath+"/deployments?environment=production", &page); err != nil {
		t.Fatal(err)
	}
	for _, d := range page.Deployments {
		if d.SpecRevision != spec1 || d.Phase != "running" && d.ID != page.Deployments[0].ID {
			t.Errorf("production's deployment %d of %s: spec revision %s, %s; want every one of spec %s", d.ID, d.Revision, d.SpecRevision, d.Phase, spec1)
		}
	}
	j.pass(6, "staging failed the next release; production kept its release; render promote refused it: "+lineFrom(r.stderr, "not promoted"))
	t.Logf("the environments journey took %s", time.Since(began).Round(time.Second))
}

// on returns the journey's view of another cluster: the same servers,
// webhook and repositories, with c as its cluster.
func (j *journey) on(c *cluster.Cluster) *journey {
	o := *j
	o.c = c
	return &o
}

// bootstrapProd applies production's cluster's GitRepository and root
// Kustomization, as flux bootstrap does for clusters/journey-prod/. Its
// folder appears with the first promotion; until then the root retries.
func (j *journey) bootstrapProd() {
	j.t.Helper()
	repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "flux-system", Namespace: fluxNS},
		Spec: sourcev1.GitRepositorySpec{URL: j.fleetURL, Interval: metav1.Duration{Duration: 10 * time.Second},
			Timeout: &metav1.Duration{Duration: 30 * time.Second}, Reference: &sourcev1.GitRepositoryRef{Branch: "main"}}}
	root := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "fleet-" + prodCluster, Namespace: fluxNS},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: 10 * time.Minute}, RetryInterval: &metav1.Duration{Duration: 5 * time.Second},
			Timeout: &metav1.Duration{Duration: time.Minute}, Path: "./fleet/clusters/" + prodCluster, Prune: true, ServiceAccountName: "kustomize-controller",
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "flux-system"}}}
	for _, o := range []client.Object{repo, root} {
		if err := j.c.Client.Create(j.ctx, o); err != nil {
			j.t.Fatal(err)
		}
	}
}

// waitEnvApplied waits until the cluster's Flux applied rev (its root and
// the app's api Kustomization) and the api rolled out want replicas.
func (j *journey) waitEnvApplied(env, rev string, want int32) *appsv1.Deployment {
	j.t.Helper()
	root := "fleet-" + clusterName
	if env == "production" {
		root = "fleet-" + prodCluster
	}
	var d appsv1.Deployment
	j.eventually(env+": Flux applies "+rev, 3*time.Minute, func() error {
		for _, k := range []string{root, project + "-" + appName + "-api"} {
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

// waitEnvPhase waits until the webhook's current deployment of the app in
// env is of rev and in phase.
func (j *journey) waitEnvPhase(env, rev, phase string) webhook.DeployStatus {
	j.t.Helper()
	var ds webhook.DeployStatus
	j.eventually(fmt.Sprintf("the webhook shows %s %s in %s", rev, phase, env), 3*time.Minute, func() error {
		ds = webhook.DeployStatus{}
		if err := j.get(appPath+"/deploy-status?environment="+env, &ds); err != nil {
			return err
		}
		if ds.Environment != env || ds.Revision != rev || string(ds.Phase) != phase {
			return fmt.Errorf("current deployment %d in %q: %s %s: %s", ds.DeploymentID, ds.Environment, ds.Revision, ds.Phase, ds.Message)
		}
		return nil
	})
	return ds
}

// checkGreen checks that every check of a deployment passed.
func checkGreen(t *testing.T, env string, ds webhook.DeployStatus) {
	t.Helper()
	if len(ds.Checks) != 3 {
		t.Errorf("%s: %d checks, want 3", env, len(ds.Checks))
	}
	for _, c := range ds.Checks {
		if c.State != probe.StatePassed {
			t.Errorf("%s: check %s = %s (%s), want passed", env, c.Name, c.State, c.Message)
		}
	}
}

// mergeBranch fast-forwards the fleet's main to branch, marks the pull
// request merged, asks Flux to fetch, and returns main's Flux revision.
func (j *journey) mergeBranch(branch string, pr int) string {
	j.t.Helper()
	j.gitIn(j.fleetBare, "fetch", "-q", ".", "refs/heads/"+branch+":refs/heads/main")
	if !j.gh.MergePullRequest(fleetRepo, pr) {
		j.t.Fatalf("fleet pull request #%d is not open", pr)
	}
	j.requestReconcile()
	return "main@sha1:" + j.gitIn(j.fleetBare, "rev-parse", "refs/heads/main")
}

// envImage returns the api's image in env's fleet files at ref.
func (j *journey) envImage(ref, env, repo string) string {
	j.t.Helper()
	f := j.envFile(env, "api/deployment-"+appName+"-api.yaml")
	out := j.gitIn(j.fleetBare, "show", ref+":"+f)
	m := regexp.MustCompile(`(?m)^[\s-]+image: "?([^"\s]+)"?$`).FindStringSubmatch(out)
	if m == nil || !strings.HasPrefix(m[1], repo+":") || digestOf(m[1]) == "" {
		j.t.Fatalf("no pinned image of %s in %s:\n%s", repo, f, out)
	}
	return m[1]
}

// resident is the resident memory of a set of processes.
type resident struct {
	total int
	each  string
}

// residentMiB reads each process's VmRSS from /proc.
func residentMiB(pids map[string]int) resident {
	var r resident
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(pids)) {
		f, err := os.Open(fmt.Sprintf("/proc/%d/status", pids[name]))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				r.total += kb / 1024
				parts = append(parts, fmt.Sprintf("%s %d", name, kb/1024))
			}
		}
		f.Close()
	}
	r.each = strings.Join(parts, ", ")
	return r
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// lineFrom is the line of s from the first sub to its end (s's first line
// without sub): the refusal among the warnings a command prints first.
func lineFrom(s, sub string) string {
	if i := strings.Index(s, sub); i >= 0 {
		s = s[i:]
	}
	return firstLine(s)
}

// envGitHubDeployment waits until the GitHub deployment of the fleet
// commit of rev in env has its last status in state, and returns it.
func (j *journey) envGitHubDeployment(rev, env, state string) githubtest.DeploymentStatus {
	j.t.Helper()
	commit := rev[strings.LastIndex(rev, ":")+1:]
	var st githubtest.DeploymentStatus
	j.eventually(fmt.Sprintf("a GitHub deployment status %s for %s in %s", state, commit, env), time.Minute, func() error {
		for _, d := range j.gh.Deployments(fleetRepo) {
			if d.Ref != commit || d.Environment != env {
				continue
			}
			if last, ok := d.LastStatus(); ok && last.State == state {
				st = last
				return nil
			}
			return fmt.Errorf("deployment %d: %+v", d.ID, d.Statuses)
		}
		return fmt.Errorf("no GitHub deployment of %s in %s yet", commit, env)
	})
	return st
}

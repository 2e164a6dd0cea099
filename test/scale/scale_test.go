package scale

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha1"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/test/cluster"
)

const (
	fluxNS    = cluster.FluxNamespace
	rootName  = "fleet-" + clusterName
	fleetRepo = "fleet.git"
)

// The environment that asks for the benchmark and shapes it.
const (
	envScale    = "FLEETWRIGHT_SCALE"                // 1 runs it
	envApps     = "FLEETWRIGHT_SCALE_APPS"           // comma-separated N (default 1,50)
	envShapes   = "FLEETWRIGHT_SCALE_SHAPES"         // comma-separated shapes (default chain,addon)
	envFluxArgs = "FLEETWRIGHT_SCALE_FLUX_ARGS"      // flags for kustomize- and helm-controller (default none: Flux's defaults)
	envSrcArgs  = "FLEETWRIGHT_SCALE_SOURCE_ARGS"    // flags for source-controller (default none)
	envKsArgs   = "FLEETWRIGHT_SCALE_KUSTOMIZE_ARGS" // flags for kustomize-controller only, after FLUX_ARGS (default none)
	envFluxEnv  = "FLEETWRIGHT_SCALE_FLUX_ENV"       // NAME=value settings for kustomize- and source-controller's Go runtime, such as GOGC (default none)
	envShards   = "FLEETWRIGHT_SCALE_SHARDS"         // kustomize-controller shards (default 0: one controller)
	envKeep     = "FLEETWRIGHT_SCALE_KEEP"           // 1 keeps the cluster's folder and logs
	envDeploy   = "FLEETWRIGHT_SCALE_DEPLOY_TIMEOUT" // how long the first deploy may take (default 30m)
	envLockdown = "FLEETWRIGHT_SCALE_LOCKDOWN"       // 0 runs Flux without its multi-tenancy lockdown (the git layout always does)
	envLayout   = "FLEETWRIGHT_SCALE_LAYOUT"         // artifacts (default: platform.yaml fleet.artifacts, a source per project and per component) or git (every component reads the fleet's GitRepository)
)

// BenchmarkFleet deploys N synthetic apps on the real controllers and
// changes one app's image (see the package documentation). Run it with
//
//	FLEETWRIGHT_SCALE=1 go test ./test/scale -run '^$' -bench . -benchtime 1x -timeout 90m -v
func BenchmarkFleet(b *testing.B) {
	if os.Getenv(envScale) != "1" {
		b.Skip("the scale benchmark runs only with " + envScale + "=1 (minutes per case)")
	}
	ctrllog.SetLogger(logr.Discard())
	ns, err := intList(envOr(envApps, "1,50"))
	if err != nil {
		b.Fatalf("%s: %v", envApps, err)
	}
	shards, err := strconv.Atoi(envOr(envShards, "0"))
	if err != nil {
		b.Fatalf("%s: %v", envShards, err)
	}
	layout := envOr(envLayout, "artifacts")
	if layout != "artifacts" && layout != "git" {
		b.Fatalf("%s: %q is not artifacts or git", envLayout, layout)
	}
	for _, shape := range strings.Split(envOr(envShapes, "chain,addon"), ",") {
		for _, n := range ns {
			b.Run(fmt.Sprintf("shape=%s/apps=%d", shape, n), func(b *testing.B) {
				r := runCase(b, Shape(shape), n, shards, layout == "artifacts")
				b.ReportMetric(r.ready.Seconds(), "ready-s")
				b.ReportMetric(r.change.Seconds(), "change-s")
				b.ReportMetric(r.settle.Seconds(), "settle-s")
				b.ReportMetric(r.fetch.Seconds(), "fetch-s")
				b.ReportMetric(float64(r.reconciles), "ks/commit")
				b.ReportMetric(float64(r.objects), "objects/commit")
				b.ReportMetric(float64(r.sources), "sources/commit")
				b.ReportMetric(r.cpu.Seconds(), "cpu-s")
				b.ReportMetric(0, "ns/op")
				b.Logf("RESULT layout=%s shape=%s apps=%d shards=%d flux-args=%q kustomize-args=%q source-args=%q flux-env=%q kustomizations=%d ready=%s change=%s settle=%s fetch=%s ks/commit=%d (metrics %d) objects/commit=%d sources/commit=%d cpu deploy=%s change=%s per-controller=%s cluster-cpu-deploy=%s api-requests-deploy=%s load=%s",
					layout, shape, n, shards, os.Getenv(envFluxArgs), os.Getenv(envKsArgs), os.Getenv(envSrcArgs), os.Getenv(envFluxEnv), r.kustomizations, r.ready.Round(100*time.Millisecond), r.change.Round(100*time.Millisecond),
					r.settle.Round(100*time.Millisecond), r.fetch.Round(10*time.Millisecond), r.reconciles, r.metricReconciles, r.objects, r.sources, r.cpuDeploy.Round(10*time.Millisecond),
					r.cpuChange.Round(10*time.Millisecond), r.perController, r.clusterDeploy, r.requestsDeploy, loadAvg())
			})
		}
	}
}

// result is what one case measured.
type result struct {
	kustomizations   int
	ready            time.Duration // fetch of the first commit → all Ready
	change           time.Duration // fetch of the change → the app Ready and rolled out
	settle           time.Duration // fetch of the change → every Kustomization handled it
	fetch            time.Duration // the push's notification → the GitRepository's artifact of it
	reconciles       int           // Kustomizations whose status shows they handled the change commit
	metricReconciles int           // kustomize-controller reconciles counted over the change
	objects          int           // inventory entries of those Kustomizations
	sources          int           // OCIRepositories that pulled a new artifact for the change
	cpu              time.Duration
	cpuDeploy        time.Duration
	cpuChange        time.Duration
	perController    string
	clusterDeploy    string // every process's CPU over the first deploy, this one's too
	requestsDeploy   string // the API server's busiest requests over the first deploy
}

func runCase(b *testing.B, shape Shape, n, shards int, artifacts bool) result {
	ctx := b.Context()
	var opts []cluster.Option
	pods := n*podsPerApp(shape) + 10
	opts = append(opts, cluster.WithNodes(pods/400+1), cluster.WithStartTimeout(5*time.Minute), cluster.WithKeepLogs(os.Getenv(envKeep) == "1"))
	if args := strings.Fields(os.Getenv(envFluxArgs)); len(args) > 0 {
		opts = append(opts, cluster.WithFluxArgs("kustomize-controller", args...), cluster.WithFluxArgs("helm-controller", args...))
	}
	if args := strings.Fields(os.Getenv(envKsArgs)); len(args) > 0 {
		opts = append(opts, cluster.WithFluxArgs("kustomize-controller", args...))
	}
	if args := strings.Fields(os.Getenv(envSrcArgs)); len(args) > 0 {
		opts = append(opts, cluster.WithFluxArgs("source-controller", args...))
	}
	if env := strings.Fields(os.Getenv(envFluxEnv)); len(env) > 0 {
		opts = append(opts, cluster.WithFluxEnv("kustomize-controller", env...), cluster.WithFluxEnv("source-controller", env...))
	}
	var shardKeys []string
	for i := range shards {
		shardKeys = append(shardKeys, fmt.Sprintf("shard%d", i+1))
	}
	if len(shardKeys) > 0 {
		opts = append(opts, cluster.WithKustomizeShards(shardKeys...))
	}
	// Flux's lockdown refuses the git layout's reads of the fleet's
	// GitRepository from the projects' namespaces; envLockdown=0 measures
	// the artifacts layout without it.
	if !artifacts || os.Getenv(envLockdown) == "0" {
		opts = append(opts, cluster.WithoutLockdown())
	}
	chartRepo := ""
	if shape == Addon {
		url, stop, err := cluster.StartChartRepo(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(stop)
		chartRepo = url
	}
	artRepo := ""
	if artifacts {
		artRepo = registrytest.New(b, registrytest.Options{}).Host() + "/fleet"
	}
	c := cluster.StartT(b, opts...)
	git := gittest.NewServer(b)
	url := git.CreateRepo(b, fleetRepo, "main", map[string]string{"README.md": "scale fleet\n"})
	bare := git.Path(fleetRepo)

	changed := n / 2
	before := fleetFiles(ctx, b, specFiles(shape, n, -1, chartRepo, shards, artRepo), artRepo)
	after := fleetFiles(ctx, b, specFiles(shape, n, changed, chartRepo, shards, artRepo), artRepo)
	commit1 := gittest.CommitFiles(b, bare, "main", "fleet of "+strconv.Itoa(n)+" apps", before)
	b.Logf("rendered %d apps (%d files); committed %s", n, len(before), commit1[:12])

	// The benchmark reads Flux's objects from a cache its watches keep, as
	// a controller does: listing 3,000 of them every second would cost the
	// API server a tenth of a core of the two it shares with Flux.
	flux := watchFlux(ctx, b, c)
	cpu0 := cpuTimes(b, c)
	req0 := apiRequests(ctx, b, c)
	bootstrap(ctx, b, c, url)
	hook := receiver(ctx, b, c)
	rev1 := "main@sha1:" + commit1
	fetched1 := waitFetched(ctx, b, flux, rev1)
	var r result
	var kss kustomizev1.KustomizationList
	deployTimeout := 30 * time.Minute
	if v := os.Getenv(envDeploy); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("%s: %v", envDeploy, err)
		}
		deployTimeout = d
	}
	poll(ctx, b, "every Kustomization Ready at "+rev1, deployTimeout, time.Second, func() error {
		kss = kustomizev1.KustomizationList{}
		if err := flux.List(ctx, &kss, client.InNamespace("")); err != nil {
			return err
		}
		want, err := wanted(ctx, flux, rev1)
		if err != nil {
			return err
		}
		return allReady(kss.Items, want)
	})
	r.ready = time.Since(fetched1)
	r.kustomizations = len(kss.Items)
	b.Logf("%d Kustomizations Ready at %s %s after the fetch", r.kustomizations, rev1, r.ready.Round(100*time.Millisecond))
	cpu1 := cpuTimes(b, c)
	r.requestsDeploy = requestUse(req0, apiRequests(ctx, b, c), 12)

	// The change lands on a fleet at rest, as a merge usually does: the
	// retries the first deploy scheduled (--requeue-dependency, 30s by
	// default) have run, and kustomize-controller has been quiet longer
	// than one of them. A retry that fires while the change is applied
	// makes the dependency reconcile again, Ready=Unknown meanwhile, and
	// its dependents wait one more interval: that is the first deploy's
	// cost, not the change's.
	// A fleet whose first deploy took longer than the Kustomizations'
	// interval (10m) is never quiet: their periodic reconciles run all the
	// time, as they do for a user. Then the change goes in once no retry
	// of the first deploy can be pending (all Ready for 35 s), with that
	// background load.
	quiet := time.Now()
	lastCount := reconcileCounts(b, c)
	neverQuiet := false
	for start := time.Now(); time.Since(quiet) < 35*time.Second; time.Sleep(time.Second) {
		if m := reconcileCounts(b, c); m != lastCount {
			lastCount, quiet = m, time.Now()
		}
		if time.Since(start) > 2*time.Minute {
			b.Logf("kustomize-controller never quiet for 35 s in %s after the first deploy (periodic reconciles): the change goes in with them", time.Since(start).Round(time.Second))
			neverQuiet = true
			break
		}
		if ctx.Err() != nil {
			b.Fatal(ctx.Err())
		}
	}

	// The change: one component's image of one app.
	project, app := appName(changed)
	diff := map[string]string{}
	for p, data := range after {
		if before[p] != data {
			diff[p] = data
		}
	}
	metrics0 := reconcileCounts(b, c)
	attempted := map[string]string{}
	for _, k := range kss.Items {
		attempted[k.Name] = k.Status.LastAttemptedRevision
	}
	pulled, err := artifactRevisions(ctx, flux)
	if err != nil {
		b.Fatal(err)
	}
	commit2 := gittest.CommitFiles(b, bare, "main", "change "+app+"'s api image", diff)
	rev2 := "main@sha1:" + commit2
	pushed := time.Now()
	notifyPush(ctx, b, hook)
	fetched2 := waitFetched(ctx, b, flux, rev2)
	r.fetch = fetched2.Sub(pushed)
	deploy := app + "-api"
	poll(ctx, b, app+" Ready at "+rev2, 10*time.Minute, 200*time.Millisecond, func() error {
		var own kustomizev1.KustomizationList
		if err := flux.List(ctx, &own, client.InNamespace(""), client.MatchingLabels{layout.LabelApp: app, layout.LabelProject: project}); err != nil {
			return err
		}
		if len(own.Items) == 0 {
			return fmt.Errorf("no Kustomization of %s", app)
		}
		want, err := wanted(ctx, flux, rev2)
		if err != nil {
			return err
		}
		if err := allReady(own.Items, want); err != nil {
			return err
		}
		var d appsv1.Deployment
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: project, Name: deploy}, &d); err != nil {
			return err
		}
		if !strings.HasSuffix(d.Spec.Template.Spec.Containers[0].Image, ":v2") {
			return fmt.Errorf("Deployment %s runs %s", deploy, d.Spec.Template.Spec.Containers[0].Image)
		}
		if s := d.Status; s.ObservedGeneration < d.Generation || s.UpdatedReplicas != s.Replicas || s.AvailableReplicas != s.Replicas || s.Replicas == 0 {
			return fmt.Errorf("Deployment %s rolling out: %+v", deploy, s)
		}
		return nil
	})
	r.change = time.Since(fetched2)
	b.Logf("%s Ready at %s, Deployment %s rolled out, %s after the fetch", app, rev2, deploy, r.change.Round(100*time.Millisecond))

	// The commit's whole cost: every Kustomization that will handle it has,
	// and kustomize-controller has been quiet for a while.
	settled := time.Now()
	last := metrics0
	poll(ctx, b, "the change commit settles", 20*time.Minute, time.Second, func() error {
		kss = kustomizev1.KustomizationList{}
		if err := flux.List(ctx, &kss, client.InNamespace("")); err != nil {
			return err
		}
		want, err := wanted(ctx, flux, rev2)
		if err != nil {
			return err
		}
		pending := pendingOn(kss.Items, want)
		m := reconcileCounts(b, c)
		if m != last && (pending > 0 || !neverQuiet) {
			last, settled = m, time.Now()
			return fmt.Errorf("kustomize-controller reconciled %d times since the change", m-metrics0)
		}
		if pending > 0 && time.Since(settled) < 70*time.Second {
			return fmt.Errorf("%d Kustomizations still on the previous commit", pending)
		}
		// A fleet never quiet (periodic reconciles) has settled when no
		// Kustomization is left on the previous commit.
		if !neverQuiet && time.Since(settled) < 10*time.Second {
			return fmt.Errorf("quiet for %s", time.Since(settled).Round(time.Second))
		}
		return nil
	})
	r.settle = settled.Sub(fetched2)
	r.metricReconciles = last - metrics0
	for _, k := range kss.Items {
		if k.Status.LastAttemptedRevision != attempted[k.Name] {
			r.reconciles++
			if k.Status.Inventory != nil {
				r.objects += len(k.Status.Inventory.Entries)
			}
		}
	}
	pulled2, err := artifactRevisions(ctx, flux)
	if err != nil {
		b.Fatal(err)
	}
	for name, rev := range pulled2 {
		if pulled[name] != rev {
			r.sources++
		}
	}
	cpu2 := cpuTimes(b, c)
	var per []string
	counts := reconcilesBy(b, c)
	for _, ctl := range c.Flux {
		d := cpu2[ctl.Name] - cpu0[ctl.Name]
		r.cpu += d
		r.cpuDeploy += cpu1[ctl.Name] - cpu0[ctl.Name]
		r.cpuChange += cpu2[ctl.Name] - cpu1[ctl.Name]
		entry := fmt.Sprintf("%s:%.1fs", ctl.Name, d.Seconds())
		if n, ok := counts[ctl.Name]; ok {
			entry += fmt.Sprintf("/%d-reconciles", n)
		}
		if peak, err := peakRSS(ctl.PID); err == nil {
			entry += fmt.Sprintf("/peak-%dMiB", peak>>20)
		} else {
			b.Errorf("%s: %v", ctl.Name, err)
		}
		per = append(per, entry)
	}
	r.perController = strings.Join(per, ",")
	r.clusterDeploy = cpuUse(cpu0, cpu1)
	return r
}

// watchFlux returns a reader of the Kustomizations, OCIRepositories and
// GitRepositories of every namespace (the root's is flux-system, the
// apps' their project's), served from a cache that watches them, once the
// cache has listed them.
func watchFlux(ctx context.Context, b *testing.B, c *cluster.Cluster) client.Reader {
	b.Helper()
	informers, err := cache.New(c.Config, cache.Options{
		Scheme: c.Scheme,
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, o := range []client.Object{&kustomizev1.Kustomization{}, &sourcev1.OCIRepository{}, &sourcev1.GitRepository{}} {
		if _, err := informers.GetInformer(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	go func() {
		if err := informers.Start(ctx); err != nil && ctx.Err() == nil {
			b.Errorf("watching Flux's objects: %v", err)
		}
	}()
	if !informers.WaitForCacheSync(ctx) {
		b.Fatal("the cache of Flux's objects did not sync")
	}
	return informers
}

// fleetFiles renders the apps repository files into the fleet's files, by
// path in the fleet repository, and pushes the components' artifacts to
// artRepo when it is set, as render does.
func fleetFiles(ctx context.Context, b *testing.B, specs map[string][]byte, artRepo string) map[string]string {
	b.Helper()
	loader, err := render.NewLoader(".")
	if err != nil {
		b.Fatal(err)
	}
	repo, ps := loader.LoadFiles(specs)
	if ps.HasErrors() {
		b.Fatalf("synthetic specs are invalid:\n%v", ps)
	}
	// As render does from the apps repository's history, every Flux object
	// of an app names the last commit of its spec: here a hash of the spec,
	// which moves with the app that changes and no other.
	specRev := func(a *load.LoadedApp) string {
		return fmt.Sprintf("%x", sha1.Sum(specs["apps/"+a.Project+"/"+a.Spec.Name+"/app.yaml"]))
	}
	f, err := generate.Render(repo, generate.Options{SpecRevision: specRev})
	if err != nil {
		b.Fatal(err)
	}
	if artRepo != "" {
		arts, err := f.Artifacts()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := artifact.Push(ctx, artRepo, arts, artifact.PushOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	out := make(map[string]string, len(f.Files))
	for _, x := range f.Files {
		out["fleet/"+x.Path] = string(x.Data)
	}
	return out
}

// bootstrap applies what `flux bootstrap` would: the fleet's GitRepository
// (interval 1m, as bootstrap writes it) and the root Kustomization of the
// cluster's folder.
func bootstrap(ctx context.Context, b *testing.B, c *cluster.Cluster, url string) {
	b.Helper()
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-system", Namespace: fluxNS},
		Spec: sourcev1.GitRepositorySpec{
			URL: url, Interval: metav1.Duration{Duration: time.Minute}, Timeout: &metav1.Duration{Duration: time.Minute},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
		},
	}
	root := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: rootName, Namespace: fluxNS},
		Spec: kustomizev1.KustomizationSpec{
			Interval: metav1.Duration{Duration: 10 * time.Minute},
			Path:     "./fleet/clusters/" + clusterName,
			Prune:    true,
			Timeout:  &metav1.Duration{Duration: 5 * time.Minute},
			SourceRef: kustomizev1.CrossNamespaceSourceReference{
				Kind: sourcev1.GitRepositoryKind, Name: "flux-system",
			},
			ServiceAccountName: cluster.RootServiceAccount,
		},
	}
	for _, o := range []client.Object{repo, root} {
		if err := c.Client.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
}

// receiver sets up what a platform team adds so that a push is fetched at
// once: a notification-controller Receiver of generic pushes for the
// fleet's GitRepository. It returns the URL to notify.
func receiver(ctx context.Context, b *testing.B, c *cluster.Cluster) string {
	b.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet-receiver", Namespace: fluxNS},
		StringData: map[string]string{"token": "scale-receiver-token"},
	}
	recv := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "notification.toolkit.fluxcd.io/v1",
		"kind":       "Receiver",
		"metadata":   map[string]any{"name": "fleet", "namespace": fluxNS},
		"spec": map[string]any{
			"type":      "generic",
			"secretRef": map[string]any{"name": secret.Name},
			"resources": []any{map[string]any{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository", "name": "flux-system"}},
		},
	}}
	for _, o := range []client.Object{secret, recv} {
		if err := c.Client.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	var path string
	poll(ctx, b, "the Receiver's webhook path", time.Minute, 200*time.Millisecond, func() error {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(recv), recv); err != nil {
			return err
		}
		p, _, _ := unstructured.NestedString(recv.Object, "status", "webhookPath")
		if p == "" {
			return fmt.Errorf("Receiver status %v", recv.Object["status"])
		}
		path = p
		return nil
	})
	return c.ReceiverURL + path
}

// notifyPush tells the Receiver that the fleet changed, as a Git host's
// push webhook does.
func notifyPush(ctx context.Context, b *testing.B, url string) {
	b.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"ref":"refs/heads/main"}`))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("POST %s: %s", url, resp.Status)
	}
}

// waitFetched waits until the fleet's GitRepository has an artifact of rev
// and returns when it saw it.
func waitFetched(ctx context.Context, b *testing.B, flux client.Reader, rev string) time.Time {
	b.Helper()
	poll(ctx, b, "Flux fetches "+rev, 5*time.Minute, 100*time.Millisecond, func() error {
		var repo sourcev1.GitRepository
		if err := flux.Get(ctx, client.ObjectKey{Namespace: fluxNS, Name: "flux-system"}, &repo); err != nil {
			return err
		}
		if repo.Status.Artifact == nil || repo.Status.Artifact.Revision != rev {
			return fmt.Errorf("GitRepository artifact %v", repo.Status.Artifact)
		}
		return nil
	})
	return time.Now()
}

// wanted returns, for a Kustomization, the revision it must have applied
// once the fleet commit rev is deployed: rev for those that read the
// fleet's GitRepository; for one that reads an OCIRepository, the digest
// that OCIRepository pins ("" while it is not in the cluster).
func wanted(ctx context.Context, flux client.Reader, rev string) (func(k *kustomizev1.Kustomization) string, error) {
	var repos sourcev1.OCIRepositoryList
	if err := flux.List(ctx, &repos, client.InNamespace("")); err != nil {
		return nil, err
	}
	pins := make(map[string]string, len(repos.Items))
	for _, o := range repos.Items {
		if o.Spec.Reference != nil {
			pins[o.Name] = o.Spec.Reference.Digest
		}
	}
	return func(k *kustomizev1.Kustomization) string {
		if k.Spec.SourceRef.Kind == sourcev1.OCIRepositoryKind {
			return pins[k.Spec.SourceRef.Name]
		}
		return rev
	}, nil
}

// artifactRevisions returns the revision of each OCIRepository's artifact.
func artifactRevisions(ctx context.Context, flux client.Reader) (map[string]string, error) {
	var repos sourcev1.OCIRepositoryList
	if err := flux.List(ctx, &repos, client.InNamespace("")); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(repos.Items))
	for _, o := range repos.Items {
		if o.Status.Artifact != nil {
			out[o.Name] = o.Status.Artifact.Revision
		}
	}
	return out, nil
}

// allReady reports whether every Kustomization applied the revision want
// gives it and is Ready.
func allReady(kss []kustomizev1.Kustomization, want func(*kustomizev1.Kustomization) string) error {
	notReady := 0
	var first string
	for i := range kss {
		k := &kss[i]
		rev := want(k)
		ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
		// A Kustomization that applied rev and passed its health check may
		// be in its periodic reconcile (every 10m): Ready is Unknown while
		// it runs. A first deploy longer than the interval always has some.
		rerun := ready != nil && ready.Status == metav1.ConditionUnknown && ready.Reason == meta.ProgressingReason &&
			apimeta.IsStatusConditionTrue(k.Status.Conditions, meta.HealthyCondition)
		if rev == "" || k.Status.LastAppliedRevision != rev || ready == nil || (ready.Status != metav1.ConditionTrue && !rerun) || k.Status.ObservedGeneration != k.Generation {
			notReady++
			if first == "" {
				msg := "no Ready condition"
				if ready != nil {
					msg = ready.Reason + ": " + ready.Message
				}
				first = fmt.Sprintf("%s applied %q (%s)", k.Name, k.Status.LastAppliedRevision, msg)
			}
		}
	}
	if notReady > 0 {
		return fmt.Errorf("%d of %d Kustomizations not Ready; first: %s", notReady, len(kss), first)
	}
	return nil
}

// pendingOn counts the Kustomizations that neither applied nor attempted
// the revision want gives them.
func pendingOn(kss []kustomizev1.Kustomization, want func(*kustomizev1.Kustomization) string) int {
	n := 0
	for i := range kss {
		k := &kss[i]
		if rev := want(k); rev == "" || (k.Status.LastAttemptedRevision != rev && k.Status.LastAppliedRevision != rev) {
			n++
		}
	}
	return n
}

// reconcileCounts sums gotk_reconcile_duration_seconds_count of kind
// Kustomization over every kustomize-controller.
func reconcileCounts(b *testing.B, c *cluster.Cluster) int {
	b.Helper()
	total := 0
	for _, n := range reconcilesBy(b, c) {
		total += n
	}
	return total
}

// reconcilesBy returns each kustomize-controller's count of Kustomization
// reconciles.
func reconcilesBy(b *testing.B, c *cluster.Cluster) map[string]int {
	b.Helper()
	out := map[string]int{}
	for _, ctl := range c.Flux {
		if !strings.HasPrefix(ctl.Name, "kustomize-controller") {
			continue
		}
		n, err := scrapeReconciles(ctl.MetricsURL)
		if err != nil {
			b.Fatalf("%s metrics: %v", ctl.Name, err)
		}
		out[ctl.Name] = n
	}
	return out
}

func scrapeReconciles(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	total := 0
	err = eachSample(resp.Body, "gotk_reconcile_duration_seconds_count", func(labels map[string]string, v float64) {
		if labels["kind"] == "Kustomization" {
			total += int(v)
		}
	})
	return total, err
}

// eachSample calls fn with the labels and value of every sample of the
// metric name in Prometheus's text format.
func eachSample(r io.Reader, name string, fn func(labels map[string]string, value float64)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			return fmt.Errorf("%q: no end of labels", line)
		}
		labels := map[string]string{}
		for _, kv := range strings.Split(line[len(name)+1:end], ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				labels[k] = strings.Trim(v, `"`)
			}
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			return fmt.Errorf("%q: %w", line, err)
		}
		fn(labels, v)
	}
	return sc.Err()
}

// benchmarkProcess names this process among the cluster's in cpuTimes:
// it serves the fleet's Git repository and artifacts registry and watches
// Flux's objects, on the same cores.
const benchmarkProcess = "benchmark"

// cpuTimes reads the user+system CPU time of every process of the
// cluster (Flux's controllers and the control plane they share the
// machine with) and of this one.
func cpuTimes(b *testing.B, c *cluster.Cluster) map[string]time.Duration {
	b.Helper()
	out := map[string]time.Duration{}
	pids := c.PIDs()
	pids[benchmarkProcess] = os.Getpid()
	for name, pid := range pids {
		d, err := processCPU(pid)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		out[name] = d
	}
	return out
}

// cpuUse lists, busiest first, the CPU time each process of the cluster
// used between two readings of cpuTimes, after their sum.
func cpuUse(before, after map[string]time.Duration) string {
	return growth(before, after, 0, func(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) })
}

// growth lists the keys whose value grew from before to after, the
// largest growth first (ties by key), at most n of them (every one when n
// is 0), after the total growth: "all:<total>,<key>:<growth>,...".
func growth[V int | time.Duration](before, after map[string]V, n int, format func(V) string) string {
	type grown struct {
		key string
		by  V
	}
	var all []grown
	var total V
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			all = append(all, grown{k, d})
			total += d
		}
	}
	slices.SortFunc(all, func(a, b grown) int { return cmp.Or(cmp.Compare(b.by, a.by), strings.Compare(a.key, b.key)) })
	if n > 0 && n < len(all) {
		all = all[:n]
	}
	parts := []string{"all:" + format(total)}
	for _, g := range all {
		parts = append(parts, g.key+":"+format(g.by))
	}
	return strings.Join(parts, ",")
}

// apiRequests reads the API server's count of the requests it served, by
// resource[/subresource] and verb ("kustomizations/status PATCH"), from
// apiserver_request_total; a dry run counts apart ("deployments APPLY
// dry-run").
func apiRequests(ctx context.Context, b *testing.B, c *cluster.Cluster) map[string]int {
	b.Helper()
	hc, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		b.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.Config.Host, "/")+"/metrics", nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatalf("the API server's metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("the API server's metrics: %s", resp.Status)
	}
	out, err := parseRequestCounts(resp.Body)
	if err != nil {
		b.Fatalf("the API server's metrics: %v", err)
	}
	return out
}

// parseRequestCounts sums apiserver_request_total by resource, subresource,
// verb and dry run.
func parseRequestCounts(r io.Reader) (map[string]int, error) {
	out := map[string]int{}
	err := eachSample(r, "apiserver_request_total", func(labels map[string]string, v float64) {
		key := labels["resource"]
		if sub := labels["subresource"]; sub != "" {
			key += "/" + sub
		}
		key += " " + labels["verb"]
		if labels["dry_run"] != "" {
			key += " dry-run"
		}
		out[key] += int(v)
	})
	return out, err
}

// requestUse lists the n request kinds the API server served most between
// two readings of apiRequests, busiest first, after their total.
func requestUse(before, after map[string]int, n int) string {
	return growth(before, after, n, strconv.Itoa)
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times (100 on
// every Linux architecture Go supports).
const clockTicks = 100

// processCPU returns utime+stime of a process (and its waited-for
// children) from /proc/<pid>/stat.
func processCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// fields[0] is field 3 (state); utime is field 14, stime field 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat: %q", pid, s)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// peakRSS returns the most memory a process has had resident (VmHWM of
// /proc/<pid>/status), in bytes.
func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	return parsePeakRSS(string(data))
}

func parsePeakRSS(status string) (int64, error) {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("unexpected VmHWM line %q", strings.TrimSpace(line))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmHWM: %w", err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no VmHWM line in /proc/<pid>/status")
}

// loadAvg is the machine's 1-minute load average, to read the numbers by.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], "/")
}

// poll calls check every interval until it returns nil, or fails the
// benchmark after timeout with check's last error.
func poll(ctx context.Context, b *testing.B, what string, timeout, interval time.Duration, check func() error) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			b.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

package cluster_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/test/cluster"
)

// A kustomize-controller shard reconciles the Kustomizations labelled with
// its key and the main controller the others; flags given with
// WithFluxArgs and WithFluxEnv reach every kustomize-controller and no
// other controller; Flux lists each controller's pid and metrics.
func TestKustomizeShards(t *testing.T) {
	t.Parallel()
	c := cluster.StartT(t, cluster.WithKustomizeShards("a"), cluster.WithFluxArgs("kustomize-controller", "--requeue-dependency=3s"),
		cluster.WithFluxEnv("kustomize-controller", "GOGC=300"))
	ctx := t.Context()

	var names []string
	for _, ctl := range c.Flux {
		names = append(names, ctl.Name)
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(ctl.PID) + "/cmdline")
		if err != nil {
			t.Fatalf("%s: %v", ctl.Name, err)
		}
		args := strings.Split(string(cmdline), "\x00")
		has := func(arg string) bool {
			for _, a := range args {
				if a == arg {
					return true
				}
			}
			return false
		}
		environ, err := os.ReadFile("/proc/" + strconv.Itoa(ctl.PID) + "/environ")
		if err != nil {
			t.Fatalf("%s: %v", ctl.Name, err)
		}
		gogc := slices.Contains(strings.Split(string(environ), "\x00"), "GOGC=300")
		if want := strings.HasPrefix(ctl.Name, "kustomize-controller"); gogc != want {
			t.Errorf("%s: GOGC=300 in its environment is %v, want %v", ctl.Name, gogc, want)
		}
		switch ctl.Name {
		case "kustomize-controller":
			if !has("--requeue-dependency=3s") || !has("--watch-label-selector=!"+cluster.ShardLabel) {
				t.Errorf("%s runs with %q", ctl.Name, args)
			}
		case "kustomize-controller-a":
			if !has("--requeue-dependency=3s") || !has("--watch-label-selector="+cluster.ShardLabel+" in (a)") {
				t.Errorf("%s runs with %q", ctl.Name, args)
			}
		case "helm-controller":
			if has("--requeue-dependency=3s") {
				t.Errorf("%s got kustomize-controller's flags: %q", ctl.Name, args)
			}
		}
	}
	if want := "source-controller kustomize-controller kustomize-controller-a notification-controller helm-controller"; strings.Join(names, " ") != want {
		t.Errorf("Flux controllers %q, want %q", names, want)
	}

	git := gittest.NewServer(t)
	url := git.CreateRepo(t, "shards.git", "main", map[string]string{
		"one/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n  namespace: default\n",
		"two/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n  namespace: default\n",
	})
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "shards", Namespace: cluster.FluxNamespace},
		Spec:       sourcev1.GitRepositorySpec{URL: url, Interval: metav1.Duration{Duration: time.Minute}, Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
	}
	ks := func(name, path string, labels map[string]string) *kustomizev1.Kustomization {
		return &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster.FluxNamespace, Labels: labels},
			Spec: kustomizev1.KustomizationSpec{
				Interval: metav1.Duration{Duration: 10 * time.Minute}, Path: path, Prune: true,
				SourceRef:          kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "shards"},
				ServiceAccountName: cluster.RootServiceAccount,
			},
		}
	}
	for _, o := range []client.Object{repo, ks("sharded", "./one", map[string]string{cluster.ShardLabel: "a"}), ks("unsharded", "./two", nil)} {
		if err := c.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(4 * time.Minute) // the test shares the machine with other clusters
	for _, name := range []string{"sharded", "unsharded"} {
		for {
			var k kustomizev1.Kustomization
			if err := c.Client.Get(ctx, client.ObjectKey{Namespace: cluster.FluxNamespace, Name: name}, &k); err != nil {
				t.Fatal(err)
			}
			if apimeta.IsStatusConditionTrue(k.Status.Conditions, meta.ReadyCondition) {
				break
			}
			if time.Now().After(deadline) {
				// The source's state says whose turn it was.
				var src sourcev1.GitRepository
				srcErr := c.Client.Get(ctx, client.ObjectKeyFromObject(repo), &src)
				t.Fatalf("Kustomization %s not Ready: %+v\nGitRepository %s (err %v): artifact %+v, conditions %+v",
					name, k.Status.Conditions, repo.Name, srcErr, src.Status.Artifact, src.Status.Conditions)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for _, ctl := range c.Flux {
		if !strings.HasPrefix(ctl.Name, "kustomize-controller") {
			continue
		}
		metrics := get(t, ctl.MetricsURL)
		reconciled := func(name string) bool {
			return strings.Contains(metrics, fmt.Sprintf(`gotk_reconcile_duration_seconds_count{kind="Kustomization",name=%q`, name))
		}
		wantSharded := ctl.Name == "kustomize-controller-a"
		if reconciled("sharded") != wantSharded || reconciled("unsharded") == wantSharded {
			t.Errorf("%s reconciled sharded: %v, unsharded: %v; want %v, %v", ctl.Name, reconciled("sharded"), reconciled("unsharded"), wantSharded, !wantSharded)
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return string(b)
}

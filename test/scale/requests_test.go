package scale

import (
	"strings"
	"testing"
)

func TestParseRequestCounts(t *testing.T) {
	t.Parallel()
	const metrics = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kustomize.toolkit.fluxcd.io",resource="kustomizations",scope="resource",subresource="status",verb="PATCH",version="v1"} 70
apiserver_request_total{code="409",component="apiserver",dry_run="",group="kustomize.toolkit.fluxcd.io",resource="kustomizations",scope="resource",subresource="status",verb="PATCH",version="v1"} 2
apiserver_request_total{code="201",component="apiserver",dry_run="All",group="apps",resource="deployments",scope="resource",subresource="",verb="APPLY",version="v1"} 5
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="APPLY",version="v1"} 4
apiserver_request_duration_seconds_count{verb="GET"} 9
`
	got, err := parseRequestCounts(strings.NewReader(metrics))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"kustomizations/status PATCH": 72, "deployments APPLY dry-run": 5, "deployments APPLY": 4}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %d, want %d", k, got[k], v)
		}
	}
	if _, err := parseRequestCounts(strings.NewReader(`apiserver_request_total{verb="GET"} x` + "\n")); err == nil {
		t.Error("a count that is not a number was taken")
	}

	before := map[string]int{"kustomizations/status PATCH": 10, "deployments APPLY": 4}
	if use, want := requestUse(before, got, 2), "all:67,kustomizations/status PATCH:62,deployments APPLY dry-run:5"; use != want {
		t.Errorf("requestUse = %q, want %q", use, want)
	}
}

func TestEachSampleKustomizationReconciles(t *testing.T) {
	t.Parallel()
	const metrics = `gotk_reconcile_duration_seconds_count{kind="Kustomization",name="a",namespace="flux-system"} 3
gotk_reconcile_duration_seconds_count{kind="OCIRepository",name="a",namespace="flux-system"} 5
gotk_reconcile_duration_seconds_sum{kind="Kustomization",name="a",namespace="flux-system"} 7.5
gotk_reconcile_duration_seconds_count{kind="Kustomization",name="b",namespace="flux-system"} 2
`
	total := 0
	if err := eachSample(strings.NewReader(metrics), "gotk_reconcile_duration_seconds_count", func(labels map[string]string, v float64) {
		if labels["kind"] == "Kustomization" {
			total += int(v)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if total != 5 {
		t.Errorf("Kustomization reconciles = %d, want 5", total)
	}
}

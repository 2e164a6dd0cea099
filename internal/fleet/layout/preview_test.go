package layout

import (
	"strings"
	"testing"
)

func TestPreviewNames(t *testing.T) {
	if got := PreviewEnvironment(12); got != "pr-12" {
		t.Errorf("PreviewEnvironment(12) = %q", got)
	}
	if got := PreviewNamespace("shop", 12); got != "shop-pr12" {
		t.Errorf("PreviewNamespace = %q", got)
	}
	for env, want := range map[string]int{"pr-1": 1, "pr-12": 12, "pr-999999999": 999999999} {
		if n, ok := PreviewOf(env); !ok || n != want {
			t.Errorf("PreviewOf(%q) = %d, %v; want %d", env, n, ok, want)
		}
	}
	for _, env := range []string{"", "pr-", "pr-0", "pr-012", "pr-1a", "pr--1", "staging", "PR-1", "pr-1234567890", "xpr-1"} {
		if n, ok := PreviewOf(env); ok {
			t.Errorf("PreviewOf(%q) = %d, true; want not a preview", env, n)
		}
	}
}

type onePlatform struct{}

func (onePlatform) ClusterNames() []string { return []string{"stage-eu"} }
func (onePlatform) ClusterPath(name string) (string, bool) {
	if name == "stage-eu" {
		return "clusters/stage", true
	}
	return "", false
}

func TestPreviewPaths(t *testing.T) {
	p := onePlatform{}
	if got := PreviewDir("stage-eu", 7); got != "previews/stage-eu/pr-7" {
		t.Errorf("PreviewDir = %q", got)
	}
	if got := PreviewRecordFile("stage-eu", 7); got != "previews/stage-eu/pr-7/preview.yaml" {
		t.Errorf("PreviewRecordFile = %q", got)
	}
	if got := PreviewFile(p, "stage-eu", 7); got != "clusters/stage/previews/pr-7.yaml" {
		t.Errorf("PreviewFile = %q", got)
	}
	if pr, ok := PreviewOfFile(p, "stage-eu", "clusters/stage/previews/pr-7.yaml"); !ok || pr != 7 {
		t.Errorf("PreviewOfFile = %d, %v", pr, ok)
	}
	for _, f := range []string{"clusters/stage/previews/pr-07.yaml", "clusters/stage/previews/x/pr-7.yaml", "clusters/stage/apps/pr-7.yaml", "clusters/stage/previews/pr-7.yml"} {
		if pr, ok := PreviewOfFile(p, "stage-eu", f); ok {
			t.Errorf("PreviewOfFile(%q) = %d", f, pr)
		}
	}
	if c, pr, ok := PreviewOfPath("previews/stage-eu/pr-7/apps/stage-eu/shop-pr7/api/api/x.yaml"); !ok || c != "stage-eu" || pr != 7 {
		t.Errorf("PreviewOfPath = %q %d %v", c, pr, ok)
	}
	for _, f := range []string{"previews/stage-eu/pr-7", "apps/stage-eu/shop/api/api/x.yaml", "previews/stage-eu/staging/x.yaml"} {
		if _, _, ok := PreviewOfPath(f); ok {
			t.Errorf("PreviewOfPath(%q) is a preview's", f)
		}
	}
	for _, d := range ManagedDirs(p) {
		if strings.HasPrefix(d, PreviewsDir) || strings.Contains(d, "/"+PreviewsDir) {
			t.Errorf("render's managed folders hold the previews' %s", d)
		}
	}
	if got := PreviewFluxName(7); got != "preview-pr-7" {
		t.Errorf("PreviewFluxName = %q", got)
	}
}

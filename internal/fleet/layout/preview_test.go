package layout

import (
	"strconv"
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

// FuzzPreviewOfNamespace checks that a namespace (from an event, say) is
// a project's preview namespace only when it is exactly the one
// PreviewNamespace names for a pull request of that project.
func FuzzPreviewOfNamespace(f *testing.F) {
	for _, s := range [][2]string{{"shop", "shop-pr12"}, {"shop", "shopx-pr1"}, {"shop", "shop-pr012"}, {"shop", "shop-pr+1"},
		{"shop", "shop-pr1-pr2"}, {"a-pr1", "a-pr1-pr2"}, {"shop", "shop-pr99999999999999999999"}, {"", "-pr1"}, {"shop", "shop-pr0"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, project, ns string) {
		pr, ok := PreviewOfNamespace(project, ns)
		if !ok {
			return
		}
		if PreviewNamespace(project, pr) != ns {
			t.Errorf("PreviewOfNamespace(%q, %q) = %d, whose namespace is %q", project, ns, pr, PreviewNamespace(project, pr))
		}
		if got, ok := PreviewOf(PreviewEnvironment(pr)); !ok || got != pr {
			t.Errorf("PreviewOfNamespace(%q, %q) = %d, which names no preview environment", project, ns, pr)
		}
	})
}

func TestPreviewOfNamespace(t *testing.T) {
	for ns, want := range map[string]int{"shop-pr12": 12, "shop-pr1": 1, "shopx-pr1": 0, "other-pr1": 0, "shop-pr01": 0, "shop-pr1x": 0, "shop-pr0": 0, "shop-pr": 0, "shop": 0} {
		if got, ok := PreviewOfNamespace("shop", ns); got != want || ok != (want > 0) {
			t.Errorf("PreviewOfNamespace(shop, %q) = %d, %v; want %d", ns, got, ok, want)
		}
	}
}

func TestParsePreviewNamespace(t *testing.T) {
	for ns, want := range map[string]string{"shop-pr12": "shop 12", "a-pr1-pr2": "a-pr1 2", "shop-pr01": "", "-pr1": "", "shop-pr": "", "shop": "", "shop-pr1x": ""} {
		project, pr, ok := ParsePreviewNamespace(ns)
		got := ""
		if ok {
			got = project + " " + strconv.Itoa(pr)
		}
		if got != want {
			t.Errorf("ParsePreviewNamespace(%q) = %q, want %q", ns, got, want)
		}
	}
}

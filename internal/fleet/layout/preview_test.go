package layout

import "testing"

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

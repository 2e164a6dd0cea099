package review

import (
	"strings"
	"testing"
)

func TestPreviewContent(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		p    Preview
		want string
	}{
		"deploying": {Preview{PR: 4, State: PreviewDeploying, Head: "0123456789abcdef", Apps: []PreviewApp{{Name: "shop/api", URLs: []string{"https://api-shop-pr4.p.example.com", "https://admin-api-shop-pr4.p.example.com"}}, {Name: "shop/db"}},
			Skipped: []PreviewSkip{{App: "shop/docs", Reason: "environments.preview.enabled: false"}}},
			"**Preview:** pr-4, deploying at `0123456789ab` — https://api-shop-pr4.p.example.com\n\n- shop/api: https://api-shop-pr4.p.example.com, https://admin-api-shop-pr4.p.example.com\n- shop/db (no ingress)\n- skipped shop/docs (environments.preview.enabled: false)"},
		"skipped": {Preview{PR: 4, State: PreviewDeploying, Skipped: []PreviewSkip{{App: "shop/docs", Reason: "environments.preview.enabled: false"}}},
			"**Preview:** skipped: shop/docs (environments.preview.enabled: false)"},
		"none":   {Preview{PR: 4, State: PreviewDeploying}, "**Preview:** none: the pull request changes no app."},
		"closed": {Preview{PR: 4, State: PreviewClosed}, "**Preview:** pr-4, closed: its files are removed from the fleet, and Flux prunes it."},
	} {
		if got := PreviewContent(tc.p); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", name, got, tc.want)
		}
	}
	// What comes from a spec cannot write Markdown or HTML.
	got := PreviewContent(Preview{PR: 1, State: PreviewDeploying, Apps: []PreviewApp{{Name: "x<img src=y>", URLs: []string{"https://a](javascript:b)"}}}})
	if strings.Contains(got, "<img") || strings.Contains(got, "a](javascript") {
		t.Errorf("not escaped: %s", got)
	}
}

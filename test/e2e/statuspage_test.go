package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// checkStatusPage opens the app's status page in headless Chromium (Debian's
// chromium), signs in with the API token through the form, and checks that
// the page shows the app running, its three checks passed and the live URL
// link. Without chromium the step fails, unless FLEETWRIGHT_SKIP_BROWSER=1
// outside CI, which skips it alone.
func (j *journey) checkStatusPage(liveURL string) {
	j.t.Helper()
	exe, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("FLEETWRIGHT_SKIP_BROWSER") == "1" && os.Getenv("CI") != "true" {
			j.t.Log("chromium is not installed and FLEETWRIGHT_SKIP_BROWSER=1: the status page is not opened")
			return
		}
		j.t.Fatal("chromium is not installed: apt-get install -y chromium (hack/test.sh does), or set FLEETWRIGHT_SKIP_BROWSER=1 outside CI")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU)
	actx, cancelA := chromedp.NewExecAllocator(j.ctx, opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	ctx, cancel := context.WithTimeout(bctx, time.Minute)
	defer cancel()
	page := j.hook.URL + "/apps/" + project + "/" + appName
	err = chromedp.Do(ctx,
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), apiToken),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.ID("check-reachability")),
	)
	if err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		j.t.Fatalf("opening the status page %s: %v\n%s", page, err, text)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[document.getElementById("phase").textContent.trim(),
		...[...document.querySelectorAll("li.check")].map(c => c.id + "=" + c.dataset.state),
		(document.getElementById("live-url") || {href: "no live URL link"}).href].join(" ")`))
	if err != nil {
		j.t.Fatalf("reading the status page: %v", err)
	}
	want := fmt.Sprintf("running check-sync=passed check-readiness=passed check-reachability=passed %s", liveURL)
	if strings.TrimSpace(got) != want {
		j.t.Errorf("the status page shows %q, want %q", got, want)
	}
}

package lifecycle_test

import (
	"context"
	"fmt"

	"github.com/fleetwright/fleetwright/internal/lifecycle"
)

// A verb returns the change it would make; nothing is written until it
// is given to Apply.
func ExamplePause() {
	ch, err := lifecycle.Pause(context.Background(), lifecycle.Options{Repo: "testdata/repo", App: "shop/reports"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ch.Done)
	fmt.Println(ch.Message())
	fmt.Print(ch.Diff())
	// Output:
	// paused shop/reports (testdata/repo/apps/shop/reports/app.yaml)
	// pause shop/reports
	//
	// Sets paused: true in apps/shop/reports/app.yaml. Its workloads render with 0 replicas and no autoscaler; the spec keeps their counts, and addons keep running.
	// --- apps/shop/reports/app.yaml
	// +++ apps/shop/reports/app.yaml
	// @@ -1,5 +1,6 @@
	//  # Nightly reports; nobody depends on them.
	//  name: reports
	// +paused: true
	//  components:
	//    - name: cron
	//      type: workload
}

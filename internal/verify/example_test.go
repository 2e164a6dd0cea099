package verify_test

import (
	"os"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/verify"
)

func ExampleReport_Output() {
	rep := &verify.Report{Findings: []verify.Finding{{
		Check: verify.CheckAPI, Diagnostic: diag.Diagnostic{Severity: verify.SeverityError,
			File: "fleet/apps/prod/shop/api/web/deployment-api-web.yaml", Line: 17,
			Object: "Deployment/api-web", Path: "spec.replicas", Message: "must be an integer, not a string"},
	}}}
	w := &diag.Writer{Out: os.Stdout}
	_ = w.Write(rep.Output())
	// Output:
	// fleet/apps/prod/shop/api/web/deployment-api-web.yaml:17: Deployment/api-web: spec.replicas: must be an integer, not a string
	// 1 error(s), 0 warning(s): 0 files, 0 Flux Kustomizations, 0 paths built, 0 objects (0s)
}

func ExamplePolicyOf() {
	p := verify.PolicyOf(&spec.Policy{RequireDigests: "error", RequireProbes: "off"})
	println := func(name string, s verify.Severity) { os.Stdout.WriteString(name + ": " + string(s) + "\n") }
	println("require_digests", p.RequireDigests)
	println("forbid_latest", p.ForbidLatest)
	println("require_probes", p.RequireProbes)
	// Output:
	// require_digests: error
	// forbid_latest: error
	// require_probes: off
}

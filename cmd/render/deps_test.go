package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRenderLinksNoServerCode: render reads the webhook's API through its
// plain wire types (internal/webhook/api), so its binary holds none of the
// webhook's storage, probes or metrics.
func TestRenderLinksNoServerCode(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, bad := range []string{
			"github.com/jackc/pgx", "modernc.org/sqlite", "github.com/prometheus/",
			"github.com/fleetwright/fleetwright/internal/store",
			"github.com/fleetwright/fleetwright/internal/probe",
		} {
			if strings.HasPrefix(pkg, bad) {
				t.Errorf("render links %s", pkg)
			}
		}
		if pkg == "github.com/fleetwright/fleetwright/internal/webhook" {
			t.Errorf("render links the webhook server, %s", pkg)
		}
	}
}

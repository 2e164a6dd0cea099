package validate

import (
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/spec"
)

// TestLoadPlatformFile reads platform.yaml's prices alone, as the webhook
// does, and reports a bad price at the file's line and column under the
// name given.
func TestLoadPlatformFile(t *testing.T) {
	t.Parallel()
	l, err := NewLoader(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	p, ps := l.LoadPlatformFile("/etc/fleetwright/platform/platform.yaml",
		[]byte("registry: registry.example.com/fleet\nprices:\n  cpu_hour: 0.031\n  memory_gib_hour: 0.0042\n  currency: EUR\n"))
	if ps.HasErrors() {
		t.Fatal(ps.Error())
	}
	if p.Prices == nil || *p.Prices != (spec.Prices{CPUHour: 0.031, MemoryGiBHour: 0.0042, Currency: "EUR"}) {
		t.Errorf("prices = %+v", p.Prices)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"prices:\n  cpu_hour: -1\n", "/etc/fleetwright/platform/platform.yaml:2:13: prices.cpu_hour: must be ≥ 0; got -1"},
		{"prices:\n  memory_gib_hour: 1e3x\n", "/etc/fleetwright/platform/platform.yaml:2:20: prices.memory_gib_hour: must be a number, not a string"},
		{"prices:\n  cpu_hour: 1\n  gpu_hour: 3\n", "/etc/fleetwright/platform/platform.yaml:3:3: prices.gpu_hour:"},
	} {
		_, ps := l.LoadPlatformFile("/etc/fleetwright/platform/platform.yaml", []byte(tc.yaml))
		if !ps.HasErrors() || !strings.Contains(ps.Error(), tc.want) {
			t.Errorf("%q: problems %q, want %q", tc.yaml, ps.Error(), tc.want)
		}
	}
}

package lifecycle_test

import (
	"testing"

	"github.com/fleetwright/fleetwright/internal/lifecycle"
)

func TestCaptureAddParam(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		arg, name string
		ok        bool
	}{
		{"image=components[api].workload_spec.image", "image", true},
		{"port=components[api].workload_spec.port", "port", true},
		{"image", "", false},
		{"=components[api].workload_spec.image", "", false},
		{"image=", "", false},
		{"image=components[api", "", false},
	} {
		var c lifecycle.Capture
		err := c.AddParam(tc.arg)
		switch {
		case tc.ok && err != nil:
			t.Errorf("AddParam(%q): %v", tc.arg, err)
		case !tc.ok && err == nil:
			t.Errorf("AddParam(%q): no error", tc.arg)
		case tc.ok && (len(c.Params) != 1 || c.Params[0].Name != tc.name):
			t.Errorf("AddParam(%q): params %+v", tc.arg, c.Params)
		case !tc.ok && len(c.Params) != 0:
			t.Errorf("AddParam(%q) failed but added %+v", tc.arg, c.Params)
		}
	}
}

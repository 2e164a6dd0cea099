package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/version"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	res := runCmd(t, nil, "version")
	if res.code != 0 || !strings.HasPrefix(res.stdout, "render ") || !strings.Contains(res.stdout, "\ngo:     "+runtime.Version()+" ") {
		t.Errorf("exit %d, stdout:\n%s", res.code, res.stdout)
	}
	res = runCmd(t, nil, "version", "--json")
	var info version.Info
	if err := json.Unmarshal([]byte(res.stdout), &info); err != nil || res.code != 0 || info.GoVersion != runtime.Version() || info.Version == "" {
		t.Errorf("exit %d, %v, stdout:\n%s", res.code, err, res.stdout)
	}
	if res := runCmd(t, nil, "version", "extra"); res.code != 2 || !strings.Contains(res.stderr, "takes no arguments") {
		t.Errorf("exit %d, stderr:\n%s", res.code, res.stderr)
	}
}

package build

import (
	"strings"
	"testing"
)

// TestRunLimits: a RUN that takes more memory, or starts more processes,
// than platform.yaml's build.limits allow fails with that reason at its
// line; one within them runs.
func TestRunLimits(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{Limits: Limits{Memory: 64 << 20, Pids: 24}, NoRegistryCache: true})
	for _, tt := range []struct{ name, dockerfile, want string }{
		{"memory", "FROM BASE\nRUN x=0123456789abcdef; while :; do x=$x$x; done\n",
			"Dockerfile:2: RUN x=0123456789abcdef; while :; do x=$x$x; done: exit code 137: out of memory: the memory limit of 64 MiB was reached (platform.yaml build.limits.memory)"},
		{"processes", "FROM BASE\nRUN set -e; for i in $(seq 40); do sleep 20 & done\n",
			"Dockerfile:2: RUN set -e; for i in $(seq 40); do sleep 20 & done: exit code 2: the process limit of 24 was reached (platform.yaml build.limits.pids)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := re.buildRun(t, re.context(t, tt.dockerfile, nil), nil)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant %s", err, tt.want)
			}
			re.checkWorkDirEmpty(t)
		})
	}
	res, err := re.buildRun(t, re.context(t, "FROM BASE\nRUN for i in 1 2 3 4 5 6 7 8; do sleep 0.1 & done; wait; echo ok > /ok\n", nil), nil)
	if err != nil {
		t.Fatalf("within the limits: %v\n%s", err, re.output)
	}
	if res.Ref == "" {
		t.Error("no image")
	}
}

// TestRunNoRuntime: without an OCI runtime, a RUN fails saying what to
// install; a Dockerfile without RUN builds.
func TestRunNoRuntime(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{Runtime: "fleetwright-no-such-runtime"})
	_, err := re.buildRun(t, re.context(t, "FROM BASE\nCOPY a /a\nRUN true\n", map[string]tfile{"a": {body: "a"}}), nil)
	if err == nil || !strings.Contains(err.Error(), "Dockerfile:3: RUN: RUN needs an OCI runtime and none of fleetwright-no-such-runtime is on PATH: install runc (Debian and Ubuntu: apt-get install runc") {
		t.Errorf("err = %v", err)
	}
	if _, err := re.buildRun(t, re.context(t, "FROM BASE\nCOPY a /a\n", map[string]tfile{"a": {body: "a"}}), nil); err != nil {
		t.Errorf("without RUN: %v", err)
	}
}

//go:build linux

package build

import (
	"os"
	"strings"
	"testing"
	"time"
)

// rootlessEnv marks the test binary re-run as an unprivileged user.
const rootlessEnv = "FLEETWRIGHT_BUILD_TEST_ROOTLESS"

// TestRootlessRun runs a RUN build as an unprivileged user (nobody): the
// sandbox gets a user namespace mapping that user to root, files the RUN
// writes are owned by 0:0 in the layer, and USER other than root is
// refused. As root, the test re-runs itself as nobody.
func TestRootlessRun(t *testing.T) {
	if os.Getenv(rootlessEnv) == "" {
		if os.Geteuid() != 0 {
			t.Skip("re-runs itself as nobody, which needs root")
		}
		needRun(t)
		sandboxInitProgram(t) // built as root, passed on
		reRunAsNobody(t, "TestRootlessRun", rootlessEnv)
		return
	}
	if os.Geteuid() == 0 {
		t.Fatal("expected to run unprivileged")
	}
	if b, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(b)) == "0" {
		t.Skip("unprivileged user namespaces are off")
	}
	for _, runtimeInit := range []bool{false, true} {
		t.Run(map[bool]string{false: "static init", true: "runtime init"}[runtimeInit], func(t *testing.T) {
			rootlessRun(t, runtimeInit)
		})
	}
}

// rootlessRun is TestRootlessRun with the static init as the container's
// pid 1, or the runtime's.
func rootlessRun(t *testing.T, runtimeInit bool) {
	e := newTestEnv(t)
	base := e.seedBusybox(t)
	output := &syncBuffer{}
	local, err := NewLocal(LocalOptions{Registry: e.reg, WorkDir: t.TempDir(), CacheDir: t.TempDir(), Init: sandboxInitProgram(t), Output: output})
	if err != nil {
		t.Fatal(err)
	}
	if runtimeInit {
		withRuntimeInit(local)
	}
	e.local = local
	root := t.TempDir()
	writeTree(t, root, map[string]tfile{"Dockerfile": {body: "FROM " + base + "\nRUN --mount=type=cache,target=/c echo \"$(id -u) in $(hostname)\" > /who && touch /c/x\n"}})
	res, err := e.build(t, Request{Root: root, Platforms: []string{platformString(hostPlatform())}})
	if err != nil && strings.Contains(err.Error(), "starting the RUN sandbox") && strings.Contains(err.Error(), "operation not permitted") {
		t.Skipf("unprivileged user namespaces are not allowed here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	files := pull(t, res.Ref, time.Unix(0, 0))[0].Files
	if got := files["/who"]; got.Content != "0 in fleetwright\n" || got.Owner != "0:0" {
		t.Errorf("/who = %+v", got)
	}
	// Two RUNs (the second from another build): the note that the limits
	// are not applied, once.
	writeTree(t, root, map[string]tfile{"n/Dockerfile": {body: "FROM " + base + "\nRUN echo n > /n\n"}})
	if _, err := e.build(t, Request{Root: root, Context: "n", Platforms: []string{platformString(hostPlatform())}}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(output.String(), "platform.yaml build.limits (memory, pids, cpus) are not applied"); n != 1 {
		t.Errorf("the note that the limits are not applied is in the build log %d times:\n%s", n, output)
	}
	writeTree(t, root, map[string]tfile{"u/Dockerfile": {body: "FROM " + base + "\nUSER app\nRUN true\n"}})
	if _, err := e.build(t, Request{Root: root, Context: "u", Platforms: []string{platformString(hostPlatform())}}); err == nil || !strings.Contains(err.Error(), "Dockerfile:3: RUN: USER app needs the builder to run as root") {
		t.Errorf("USER app without root: %v", err)
	}
}

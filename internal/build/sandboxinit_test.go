package build

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRunInit: the RUN's command is a child of the static init (package
// sandboxinit), not pid 1; the init is read-only, in no layer, and the
// command does not get its status pipe (fd 3).
func TestRunInit(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{})
	df := "FROM BASE\nRUN echo $$ > /pid; tr '\\0' ' ' < /proc/1/cmdline > /init; ls /proc/$$/fd > /fds; (echo x > /dev/.fleetwright-init) 2>/dev/null && echo writable > /w; exit 0\n"
	res, err := re.buildRun(t, re.context(t, df, nil), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, re.output)
	}
	files := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files
	if got := files["/pid"].Content; got == "1\n" || got == "" {
		t.Errorf("the command's pid = %q", got)
	}
	if got := files["/init"].Content; !strings.HasPrefix(got, "/dev/.fleetwright-init /bin/sh -c ") {
		t.Errorf("pid 1 = %q", got)
	}
	if got := files["/fds"].Content; !strings.HasPrefix(got, "0\n1\n") || strings.Contains(got, "\n3\n") {
		t.Errorf("the command's open files: %q", got)
	}
	if _, ok := files["/w"]; ok {
		t.Error("the init's executable is writable")
	}
	for name := range files {
		if strings.HasPrefix(name, "/dev/") {
			t.Errorf("the layer holds %s", name)
		}
	}
}

// TestRunRuntimeInit runs RUN as a dynamically linked builder without
// LocalOptions.Init does: the runtime's init is pid 1 and the command is
// executed beside it. Exit codes, a command that kills itself, output and
// the timeout behave as with the static init.
func TestRunRuntimeInit(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{Timeout: 6 * time.Second})
	withRuntimeInit(re.local)
	res, err := re.buildRun(t, re.context(t, "FROM BASE\nRUN echo $$ > /pid && echo hello\n", nil), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, re.output)
	}
	if got := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files["/pid"].Content; got == "1\n" {
		t.Error("the command is pid 1")
	}
	if !strings.Contains(re.output.String(), "hello\n") {
		t.Errorf("output:\n%s", re.output)
	}
	for _, tt := range []struct{ dockerfile, want string }{
		{"FROM BASE\nRUN echo no; exit 3\n", "Dockerfile:2: RUN echo no; exit 3: exit code 3: no"},
		{"FROM BASE\nRUN kill -9 $$\n", "Dockerfile:2: RUN kill -9 $$: exit code 137"},
	} {
		if _, err := re.buildRun(t, re.context(t, tt.dockerfile, nil), nil); err == nil || err.Error() != tt.want {
			t.Errorf("err = %v, want %s", err, tt.want)
		}
	}
	_, err = re.buildRun(t, re.context(t, "FROM BASE\nRUN (sleep 1000 &) ; sleep 1000\n", nil), nil)
	var rerr *RunError
	if !errors.As(err, &rerr) || !rerr.Killed || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: err = %v", err)
	}
	re.checkWorkDirEmpty(t)
}

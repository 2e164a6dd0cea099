package build

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// busyboxPath is Debian's busybox-static, which hack/test.sh installs.
const busyboxPath = "/bin/busybox"

var busyboxOnce struct {
	sync.Once
	layer v1.Layer
	err   error
}

// needRun skips tests that execute RUN where it cannot work: no root (the
// tests run RUN as several users), not Linux, or no static busybox.
func needRun(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("RUN needs Linux")
	}
	if os.Geteuid() != 0 {
		t.Skip("these RUN tests need root (USER other than root; see docs/build.md)")
	}
	if _, err := os.Stat(busyboxPath); err != nil {
		// hack/test.sh installs it: a run as root without it is a broken
		// setup, not a reason to leave RUN untested.
		if os.Getenv(SkipRunEnv) != "1" {
			t.Fatalf("%s missing: install Debian's busybox-static (hack/test.sh does), or set %s=1 to skip the RUN tests", busyboxPath, SkipRunEnv)
		}
		t.Skipf("%s missing and %s=1", busyboxPath, SkipRunEnv)
	}
	if _, err := exec.LookPath("runc"); err != nil {
		if _, err := exec.LookPath("crun"); err != nil {
			if os.Getenv(SkipRunEnv) != "1" {
				t.Fatalf("no OCI runtime on PATH: install runc (hack/test.sh does), or set %s=1 to skip the RUN tests", SkipRunEnv)
			}
			t.Skipf("no OCI runtime and %s=1", SkipRunEnv)
		}
	}
	if err := namespacesOnce(); err != nil {
		t.Skipf("this machine does not let root create namespaces (a container without CAP_SYS_ADMIN?): %v", err)
	}
}

// busyboxLayer is a root filesystem of static busybox: /bin/busybox, a
// link per applet, /etc/passwd and /etc/group with root and app (1000), a
// sticky /tmp and /root.
func busyboxLayer(t testing.TB) v1.Layer {
	t.Helper()
	busyboxOnce.Do(func() {
		bin, err := os.ReadFile(busyboxPath)
		if err != nil {
			busyboxOnce.err = err
			return
		}
		list, err := exec.Command(busyboxPath, "--list").Output()
		if err != nil {
			busyboxOnce.err = err
			return
		}
		entries := []*fileEntry{
			{path: "/bin", mode: fs.ModeDir | 0o755},
			{path: "/bin/busybox", mode: 0o755, data: bin},
			{path: "/etc", mode: fs.ModeDir | 0o755},
			{path: "/etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000:app:/home/app:/bin/sh\n")},
			{path: "/etc/group", mode: 0o644, data: []byte("root:x:0:\napp:x:1000:\nstaff:x:50:app\n")},
			{path: "/tmp", mode: fs.ModeDir | fs.ModeSticky | 0o777},
			{path: "/root", mode: fs.ModeDir | 0o700},
			{path: "/home", mode: fs.ModeDir | 0o755},
			{path: "/home/app", mode: fs.ModeDir | 0o755, uid: 1000, gid: 1000},
		}
		for _, a := range strings.Fields(string(list)) {
			if a != "busybox" && !strings.ContainsAny(a, "[/") {
				entries = append(entries, &fileEntry{path: "/bin/" + a, mode: fs.ModeSymlink | 0o777, link: "busybox"})
			}
		}
		raw, err := writeTar(entries, time.Unix(0, 0).UTC())
		if err != nil {
			busyboxOnce.err = err
			return
		}
		busyboxOnce.layer, busyboxOnce.err = newMemLayer(raw, "application/vnd.oci.image.layer.v1.tar+gzip")
	})
	if busyboxOnce.err != nil {
		t.Fatal(busyboxOnce.err)
	}
	return busyboxOnce.layer
}

// hostPlatform is the platform RUN executes natively here.
func hostPlatform() v1.Platform { return v1.Platform{OS: "linux", Architecture: runtime.GOARCH} }

// seedBusybox pushes base/busybox:v1 for the host's platform.
func (e *testEnv) seedBusybox(t testing.TB) string {
	t.Helper()
	img := makeImage(t, hostPlatform(), v1.Config{Env: []string{"PATH=/bin"}, Cmd: []string{"/bin/sh"}}, busyboxLayer(t))
	e.push(t, "base/busybox:v1", img)
	return e.host + "/base/busybox:v1"
}

// runEnv is a test registry with a busybox base and a local builder whose
// work and cache folders are the test's.
type runTestEnv struct {
	*testEnv
	base     string
	workDir  string
	cacheDir string
	output   *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newRunEnv(t testing.TB, opts LocalOptions) *runTestEnv {
	t.Helper()
	needRun(t)
	e := newTestEnv(t)
	re := &runTestEnv{testEnv: e, base: e.seedBusybox(t), workDir: runWorkDir(t), cacheDir: t.TempDir(), output: &syncBuffer{}}
	opts.Registry = e.reg
	opts.WorkDir, opts.CacheDir, opts.Output = re.workDir, cmpOr(opts.CacheDir, re.cacheDir), re.output
	opts.Init = cmpOr(opts.Init, sandboxInitProgram(t))
	local, err := NewLocal(opts)
	if err != nil {
		t.Fatal(err)
	}
	e.local = local
	return re
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// context writes a build context with the Dockerfile (BASE replaced by the
// busybox image) and files.
func (re *runTestEnv) context(t testing.TB, dockerfile string, files map[string]tfile) string {
	t.Helper()
	root := t.TempDir()
	all := map[string]tfile{"Dockerfile": {body: strings.ReplaceAll(dockerfile, "BASE", re.base)}}
	for k, v := range files {
		all[k] = v
	}
	writeTree(t, root, all)
	return root
}

func (re *runTestEnv) buildRun(t testing.TB, root string, mod func(*Request)) (Result, error) {
	t.Helper()
	req := Request{Root: root, Platforms: []string{platformString(hostPlatform())}, SourceDateEpoch: 1700000000}
	if mod != nil {
		mod(&req)
	}
	return re.build(t, req)
}

// checkWorkDirEmpty fails when a build left anything in the work folder.
func (re *runTestEnv) checkWorkDirEmpty(t testing.TB) {
	t.Helper()
	ents, err := os.ReadDir(re.workDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) > 0 {
		t.Errorf("the work folder keeps %d entries after the build", len(ents))
	}
}

// ownFiles is the files of the layers above the base's, and the whiteouts
// and opaque markers as written.
func layerNames(t testing.TB, ref string) [][]string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tarNames(t, rc))
		rc.Close()
	}
	return out
}

func tarNames(t testing.TB, r io.Reader) []string {
	t.Helper()
	var names []string
	tr := newTarReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

const runDockerfile = `FROM BASE
ARG GREETING=hello
ENV APP=demo
WORKDIR /app
RUN echo "$GREETING $APP" > greeting.txt && mkdir -p /opt/data && echo one > /opt/data/one && echo two > /opt/data/two \
    && chmod 0750 /opt/data && rm /etc/group.bak 2>/dev/null; ln -s greeting.txt /app/link; echo done-first
RUN rm /opt/data/two && echo changed > /opt/data/one && chown 1000:50 /opt/data/one && rm -r /home/app
RUN <<EOF
set -e
echo "heredoc $APP" > /app/heredoc.txt
chmod 4755 /app/heredoc.txt
EOF
RUN <<EOF
#!/bin/sh
echo "script as $(id -u):$(id -g)" > /app/script.txt
EOF
USER app
RUN id -u > /tmp/uid && id -G > /tmp/groups && touch /home/me 2>/dev/null || echo "no home for app" > /tmp/nohome
USER root
RUN ["/bin/sh", "-c", "echo exec-form > /app/exec.txt; rm -f /tmp/uid.old"]
SHELL ["/bin/sh", "-ec"]
RUN echo "shell is $0" > /app/shell.txt
ENTRYPOINT ["/bin/sh", "-c", "cat /app/greeting.txt /app/heredoc.txt; id -un"]
`

func TestRunBuild(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{})
	root := re.context(t, runDockerfile, nil)
	res, err := re.buildRun(t, root, func(r *Request) { r.BuildArgs = map[string]string{"GREETING": "hi"} })
	if err != nil {
		t.Fatalf("%v\noutput:\n%s", err, re.output)
	}
	re.checkWorkDirEmpty(t)
	if !strings.Contains(re.output.String(), "done-first\n") {
		t.Errorf("the RUN output is not passed on:\n%s", re.output)
	}
	et := time.Unix(1700000000, 0).UTC()
	images := pull(t, res.Ref, et)
	if len(images) != 1 {
		t.Fatalf("%d images", len(images))
	}
	got := images[0].Files
	want := map[string]pulledFile{
		"/app":              {Mode: "drwxr-xr-x", Owner: "0:0"},
		"/app/greeting.txt": {Mode: "-rw-r--r--", Owner: "0:0", Content: "hi demo\n"},
		"/app/link":         {Mode: "Lrwxrwxrwx", Owner: "0:0", Link: "greeting.txt"},
		"/app/heredoc.txt":  {Mode: "urwxr-xr-x", Owner: "0:0", Content: "heredoc demo\n"},
		"/app/script.txt":   {Mode: "-rw-r--r--", Owner: "0:0", Content: "script as 0:0\n"},
		"/app/exec.txt":     {Mode: "-rw-r--r--", Owner: "0:0", Content: "exec-form\n"},
		"/app/shell.txt":    {Mode: "-rw-r--r--", Owner: "0:0", Content: "shell is /bin/sh\n"},
		"/opt":              {Mode: "drwxr-xr-x", Owner: "0:0"},
		"/opt/data":         {Mode: "drwxr-x---", Owner: "0:0"},
		"/opt/data/one":     {Mode: "-rw-r--r--", Owner: "1000:50", Content: "changed\n"},
		"/tmp/uid":          {Mode: "-rw-r--r--", Owner: "1000:1000", Content: "1000\n"},
		"/tmp/groups":       {Mode: "-rw-r--r--", Owner: "1000:1000", Content: "1000 50\n"},
		"/tmp/nohome":       {Mode: "-rw-r--r--", Owner: "1000:1000", Content: "no home for app\n"},
	}
	for p, w := range want {
		if d := cmp.Diff(w, got[p]); d != "" {
			t.Errorf("%s (-want +got):\n%s", p, d)
		}
	}
	for _, gone := range []string{"/opt/data/two", "/home/app"} {
		if _, ok := got[gone]; ok {
			t.Errorf("%s is still in the image", gone)
		}
	}
	if _, ok := got["/proc"]; ok {
		t.Errorf("the /proc mount point is in the image")
	}
	if _, ok := got["/etc/hosts"]; ok {
		t.Errorf("the /etc/hosts mount point is in the image")
	}
	// The layers: one per RUN, each with only what it changed.
	names := layerNames(t, res.Ref)
	if len(names) != 8 {
		t.Fatalf("%d layers, want the base's and 7 RUN layers: %v", len(names), names)
	}
	wantLayers := [][]string{
		{"app/", "app/greeting.txt", "app/link", "opt/", "opt/data/", "opt/data/one", "opt/data/two"},
		{"home/.wh.app", "opt/data/.wh.two", "opt/data/one"},
		{"app/heredoc.txt"},
		{"app/script.txt"},
		{"home/", "home/me", "tmp/groups", "tmp/uid"},
		{"app/exec.txt"},
		{"app/shell.txt"},
	}
	wantLayers[4] = []string{"tmp/groups", "tmp/nohome", "tmp/uid"}
	if d := cmp.Diff(wantLayers, names[1:]); d != "" {
		t.Errorf("RUN layers (-want +got):\n%s", d)
	}
	checkMTimes(t, res.Ref, et, 1)
	// The entrypoint works, run by the same sandbox.
	out, err := runImage(t, re, res.Ref)
	if err != nil {
		t.Fatalf("entrypoint: %v\n%s", err, out)
	}
	if out != "hi demo\nheredoc demo\nroot\n" {
		t.Errorf("entrypoint printed %q", out)
	}
}

// TestRunOpaqueDirectory: a directory whose entries are all replaced is
// marked opaque in the layer, and the image shows only the new entries.
func TestRunOpaqueDirectory(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{})
	root := re.context(t, "FROM BASE\nRUN mkdir -p /d/sub && touch /d/a /d/b /d/sub/x\nRUN rm -rf /d/* && echo new > /d/c\n", nil)
	res, err := re.buildRun(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := layerNames(t, res.Ref)
	if d := cmp.Diff([]string{"d/", "d/.wh..wh..opq", "d/c"}, names[len(names)-1]); d != "" {
		t.Errorf("layer (-want +got):\n%s", d)
	}
	files := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files
	var under []string
	for p := range files {
		if strings.HasPrefix(p, "/d/") {
			under = append(under, p)
		}
	}
	if d := cmp.Diff([]string{"/d/c"}, under); d != "" {
		t.Errorf("files below /d (-want +got):\n%s", d)
	}
}

// TestRunReproducible: the same inputs give the same digest, RUN
// included, on a fresh builder with an empty cache too.
func TestRunReproducible(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{NoRegistryCache: true})
	root := re.context(t, runDockerfile, nil)
	first, err := re.buildRun(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := re.buildRun(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Digest != second.Digest {
		t.Errorf("same inputs, different digests: %s and %s", first.Digest, second.Digest)
	}
}

// TestRunFailure: a failing RUN names its line, exit code and last output
// lines; nothing is pushed and the work folder is left empty.
func TestRunFailure(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{})
	tests := []struct {
		name, dockerfile string
		wantErr          string
		wantOutput       string
	}{
		{"exit code", "FROM BASE\nRUN echo ok > /ok\n\nRUN for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22; do echo line $i; done; exit 3\n",
			"Dockerfile:4: RUN for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 …: exit code 3: line 22", "line 3\nline 4\n"},
		{"not found", "FROM BASE\nRUN [\"/usr/bin/make\"]\n", "Dockerfile:2: RUN [/usr/bin/make]: exit code 127: /usr/bin/make: no such file in the image", ""},
		{"no shell", "FROM scratch\nRUN true\n", "Dockerfile:2: RUN true: exit code 127: /bin/sh: no such file in the image", ""},
		{"killed by a signal", "FROM BASE\nRUN kill -9 $$\n", "Dockerfile:2: RUN kill -9 $$: exit code 137", ""},
		{"unknown user", "FROM BASE\nUSER nobody\nRUN true\n", "Dockerfile:3: RUN: USER nobody: no user \"nobody\" in /etc/passwd", ""},
		{"host network not allowed", "FROM BASE\nRUN --network=host true\n", "Dockerfile:2: RUN: --network=host is not allowed; platform.yaml's build.network must be host", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := re.context(t, tt.dockerfile, nil)
			before := len(re.srv.Requests())
			_, err := re.buildRun(t, root, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			var rerr *RunError
			if tt.wantOutput != "" {
				if !errors.As(err, &rerr) {
					t.Fatalf("err = %T, want *RunError", err)
				}
				out := rerr.BuildOutput()
				if strings.Count(out, "\n") != RunOutputLines || strings.HasPrefix(out, "line 2\n") || !strings.HasPrefix(out, tt.wantOutput) {
					t.Errorf("output tail:\n%s", out)
				}
			}
			for _, r := range re.srv.Requests()[before:] {
				if r.Method != "GET" && r.Method != "HEAD" {
					t.Errorf("a failed build sent %s %s", r.Method, r.Path)
				}
			}
			re.checkWorkDirEmpty(t)
		})
	}
}

// TestRunTimeout: a command that hangs, with children, is killed at the
// build timeout.
func TestRunTimeout(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{Timeout: 6 * time.Second})
	root := re.context(t, "FROM BASE\nRUN (sleep 1000 &) ; sleep 1000\n", nil)
	start := time.Now()
	_, err := re.buildRun(t, root, nil)
	var rerr *RunError
	if !errors.As(err, &rerr) || !rerr.Killed || !strings.Contains(err.Error(), "Dockerfile:2: RUN (sleep 1000 &) ; sleep 1000: killed at the build timeout") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the build took %v", d)
	}
	re.checkWorkDirEmpty(t)

	// A cancelled build (another build of the level failed) is cancelled,
	// not timed out.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	_, err = re.local.Build(ctx, Request{Root: root, Repo: re.host + "/shop/cancelled", Tag: "t", Platforms: []string{platformString(hostPlatform())}})
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "timeout") {
		t.Errorf("cancelled: err = %v", err)
	}
	re.checkWorkDirEmpty(t)
}

// TestRunMultiStage copies what a RUN of one stage made into another, and
// runs RUN on a stage built from an earlier one.
func TestRunMultiStage(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{})
	df := `FROM BASE AS build
WORKDIR /src
COPY main.txt .
RUN mkdir -p /out && tr a-z A-Z < main.txt > /out/app && chmod 755 /out/app && chown 1000:1000 /out/app

FROM build AS test
RUN test "$(cat /out/app)" = "HELLO" && echo tested > /tested

FROM scratch
COPY --from=build /out/app /app
COPY --from=test /tested /tested
`
	root := re.context(t, df, map[string]tfile{"main.txt": {body: "hello"}})
	res, err := re.buildRun(t, root, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, re.output)
	}
	got := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files
	want := map[string]pulledFile{
		"/app":    {Mode: "-rwxr-xr-x", Owner: "1000:1000", Content: "HELLO"}, // COPY --from keeps owners
		"/tested": {Mode: "-rw-r--r--", Owner: "0:0", Content: "tested\n"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
}

// TestRunOtherPlatform: RUN for a platform the machine cannot execute
// fails clearly unless binfmt_misc has an emulator for it.
func TestRunOtherPlatform(t *testing.T) {
	t.Parallel()
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	re := newRunEnv(t, LocalOptions{})
	if _, _, _, err := binfmtHandler(binfmtDir, other); err == nil {
		t.Skipf("an emulator for %s is registered here", other)
	}
	root := re.context(t, "FROM --platform=linux/"+other+" scratch\nRUN true\n", nil)
	_, err := re.buildRun(t, root, nil)
	want := "Dockerfile:2: RUN: cannot run programs for linux/" + other + " on this " + runtime.GOARCH + " machine: no emulator is registered with binfmt_misc"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func TestBinfmtHandler(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]tfile{
		"register": {body: ""},
		"status":   {body: "enabled\n"},
		"qemu-aarch64": {body: "enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: POCF\noffset 0\n" +
			"magic 7f454c460201010000000000000000000200b700\nmask ffffffffffffff00fffffffffffffffffeffffff\n"},
		"qemu-riscv64": {body: "disabled\ninterpreter /usr/bin/qemu-riscv64\nflags: \noffset 0\n" +
			"magic 7f454c460201010000000000000000000200f300\nmask ffffffffffffff00fffffffffffffffffeffffff\n"},
		"qemu-s390x": {body: "enabled\ninterpreter /usr/bin/qemu-s390x\nflags: P\noffset 0\n" +
			"magic 7f454c4602020100000000000000000000020016\nmask ffffffffffffff00fffffffffffffffffffeffff\n"},
	})
	tests := []struct {
		arch, name string
		fixed      bool
	}{
		{"arm64", "qemu-aarch64", true},
		{"riscv64", "", false},
		{"s390x", "qemu-s390x", false},
		{"ppc64le", "", false},
	}
	for _, tt := range tests {
		name, _, fixed, err := binfmtHandler(dir, tt.arch)
		if name != tt.name || fixed != tt.fixed || (err == nil) != (tt.name != "") {
			t.Errorf("%s: got %q fixed=%v err=%v, want %q fixed=%v", tt.arch, name, fixed, err, tt.name, tt.fixed)
		}
	}
	l := &Local{binfmtDir: dir}
	if err := l.canRun(v1.Platform{OS: "linux", Architecture: "s390x"}); err == nil || !strings.Contains(err.Error(), "without the F flag") {
		t.Errorf("s390x: %v", err)
	}
	if err := l.canRun(v1.Platform{OS: "windows", Architecture: runtime.GOARCH}); err == nil {
		t.Errorf("windows: no error")
	}
	_ = slices.Contains[[]string]
	_ = filepath.Join
}

func newTarReader(r io.Reader) *tar.Reader { return tar.NewReader(r) }

// runImage runs the entrypoint of the image at ref (the host's platform)
// with the builder's sandbox and returns what it printed.
func runImage(t testing.TB, re *runTestEnv, ref string) (string, error) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r, remote.WithPlatform(hostPlatform()))
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	code, err := re.local.runImage(context.Background(), img, &out)
	if err == nil && code != 0 {
		err = fmt.Errorf("exit code %d", code)
	}
	return out.String(), err
}

func TestLineTail(t *testing.T) {
	t.Parallel()
	tail := &lineTail{max: 3}
	long := strings.Repeat("x", 5000)
	for _, w := range []string{"one\ntw", "o\nthree\n", long + "\nfour\n", "par", "tial"} {
		tail.Write([]byte(w))
	}
	want := strings.Repeat("x", maxTailLine) + "…\nfour\npartial\n"
	if got := tail.String(); got != want {
		t.Errorf("tail = %q", got)
	}
}

//go:build linux

package build

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The tests of this file are hostile Dockerfiles and build contexts, each
// trying one way out of RUN that worked against the earlier, hand-made
// sandbox: they pass only when the way is closed.

// hostMarker writes a file outside every build context, as a token on the
// CI runner would be, and returns its path.
func hostMarker(t testing.TB, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "runner-token")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkMarker fails when the host file no longer holds content.
func checkMarker(t testing.TB, p, content string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != content {
		t.Errorf("the host file %s was overwritten: %q", p, b)
	}
}

// TestEscapeBindFileLink: a committed link to a host file, mounted read-write
// over /etc/passwd, neither shows nor overwrites the host file; the build
// fails at the RUN's line. A link that stays in the context still works.
func TestEscapeBindFileLink(t *testing.T) {
	t.Parallel()
	const token = "runner-token-4f1c2a\n"
	marker := hostMarker(t, token)
	re := newRunEnv(t, LocalOptions{})
	root := re.context(t, "FROM BASE\nRUN --mount=type=bind,source=hf,target=/etc/passwd,rw cat /etc/passwd; echo owned > /etc/passwd\n",
		map[string]tfile{"hf": {link: marker}})
	_, err := re.buildRun(t, root, nil)
	if err == nil || !strings.Contains(err.Error(), "Dockerfile:2: RUN: --mount=type=bind,source=hf: ") || !strings.Contains(err.Error(), "outside the build context") {
		t.Errorf("err = %v, want the link refused at Dockerfile:2", err)
	}
	checkMarker(t, marker, token)
	if strings.Contains(re.output.String(), strings.TrimSpace(token)) {
		t.Errorf("the RUN printed the host file:\n%s", re.output)
	}
	re.checkWorkDirEmpty(t)

	// A link to a file of the context is mounted as that file.
	root = re.context(t, "FROM BASE\nRUN --mount=type=bind,source=link,target=/in cat /in > /out\n",
		map[string]tfile{"conf/real": {body: "inside\n"}, "link": {link: "conf/real"}})
	res, err := re.buildRun(t, root, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, re.output)
	}
	if got := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files["/out"].Content; got != "inside\n" {
		t.Errorf("/out = %q", got)
	}
}

// TestEscapeBindFolderLinkToProc: a committed link to /proc, mounted as a
// folder, does not show the environment of the runner's processes (their
// tokens).
func TestEscapeBindFolderLinkToProc(t *testing.T) {
	t.Parallel()
	runner := exec.Command("/bin/sleep", "60")
	runner.Env = []string{"RUNNER_TOKEN=ghs_runnerSecret0123456789"}
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Process.Kill(); runner.Wait() })
	re := newRunEnv(t, LocalOptions{})
	df := fmt.Sprintf("FROM BASE\nRUN --mount=type=bind,source=p,target=/hostproc tr '\\0' '\\n' < /hostproc/%d/environ | grep RUNNER_TOKEN\n", runner.Process.Pid)
	root := re.context(t, df, map[string]tfile{"p": {link: "/proc"}})
	_, err := re.buildRun(t, root, nil)
	if err == nil || !strings.Contains(err.Error(), "Dockerfile:2: RUN: --mount=type=bind,source=p: ") {
		t.Errorf("err = %v, want the link refused at Dockerfile:2", err)
	}
	if strings.Contains(re.output.String(), "ghs_runnerSecret") {
		t.Errorf("the RUN read a runner process's environment:\n%s", re.output)
	}
}

// dockerDefaultCaps is Docker's (and BuildKit's) default capability set:
// CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID, SETPCAP,
// NET_BIND_SERVICE, NET_RAW, SYS_CHROOT, MKNOD, AUDIT_WRITE, SETFCAP.
const dockerDefaultCaps = "00000000a80425fb"

// TestEscapeCapabilities: a RUN as root has Docker's default capabilities
// and no others (none of CAP_SYS_ADMIN, CAP_DAC_READ_SEARCH,
// CAP_SYS_MODULE…), no_new_privs and a seccomp filter; a RUN as another
// user has none.
func TestEscapeCapabilities(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{})
	root := re.context(t, "FROM BASE\nRUN grep -E '^(CapEff|CapBnd|CapPrm|NoNewPrivs|Seccomp):' /proc/self/status > /status\nUSER app\nRUN grep -E '^CapEff:' /proc/self/status > /tmp/app\n", nil)
	res, err := re.buildRun(t, root, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, re.output)
	}
	files := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files
	want := "CapPrm:\t" + dockerDefaultCaps + "\nCapEff:\t" + dockerDefaultCaps + "\nCapBnd:\t" + dockerDefaultCaps + "\nNoNewPrivs:\t1\nSeccomp:\t2\n"
	if got := files["/status"].Content; got != want {
		t.Errorf("/proc/self/status of a RUN:\n%s\nwant\n%s", got, want)
	}
	if got := files["/tmp/app"].Content; got != "CapEff:\t0000000000000000\n" {
		t.Errorf("USER app: %q", got)
	}
}

var openByHandleOnce struct {
	sync.Once
	bin []byte
	err error
}

// openByHandleProgram builds testdata/openbyhandle, static.
func openByHandleProgram(t testing.TB) []byte {
	t.Helper()
	openByHandleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "openbyhandle-")
		if err != nil {
			openByHandleOnce.err = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "obh")
		cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", out, "./testdata/openbyhandle")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			openByHandleOnce.err = fmt.Errorf("building testdata/openbyhandle: %v\n%s", err, b)
			return
		}
		openByHandleOnce.bin, openByHandleOnce.err = os.ReadFile(out)
	})
	if openByHandleOnce.err != nil {
		t.Fatal(openByHandleOnce.err)
	}
	return openByHandleOnce.bin
}

// TestEscapeOpenByHandle: open_by_handle_at with the handle of a host file
// (as an attacker would guess it) fails in a RUN, so the host file is not
// read through the filesystem the root filesystem lives on.
func TestEscapeOpenByHandle(t *testing.T) {
	t.Parallel()
	const token = "host-marker-9d2e71\n"
	re := newRunEnv(t, LocalOptions{})
	// The marker beside the work folder: on the same filesystem as the
	// RUN's root filesystem.
	marker := filepath.Join(filepath.Dir(re.workDir), "host-marker")
	if err := os.WriteFile(marker, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, marker, 0)
	if err != nil {
		t.Skipf("this filesystem has no file handles: %v", err)
	}
	df := fmt.Sprintf("FROM BASE\nCOPY obh /obh\nRUN /obh %d %s > /out 2>&1\n", h.Type(), hex.EncodeToString(h.Bytes()))
	root := re.context(t, df, map[string]tfile{"obh": {body: string(openByHandleProgram(t)), mode: 0o755}})
	res, err := re.buildRun(t, root, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, re.output)
	}
	got := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files["/out"].Content
	if strings.Contains(got, strings.TrimSpace(token)) || !strings.HasPrefix(got, "open_by_handle_at: operation not permitted") {
		t.Errorf("open_by_handle_at in a RUN: %q", got)
	}
}

// escapeRootlessEnv marks the test binary re-run as nobody by
// TestEscapeRootless.
const escapeRootlessEnv = "FLEETWRIGHT_BUILD_TEST_ESCAPE_ROOTLESS"

// TestEscapeRootless: run by an unprivileged user (the rootless path), a
// committed link to a host file that user owns is neither read nor
// written through a read-write bind mount. As root, the test re-runs
// itself as nobody.
func TestEscapeRootless(t *testing.T) {
	if os.Getenv(escapeRootlessEnv) == "" {
		if os.Geteuid() != 0 {
			t.Skip("re-runs itself as nobody, which needs root")
		}
		needRun(t)
		sandboxInitProgram(t) // built as root, passed on
		reRunAsNobody(t, "TestEscapeRootless", escapeRootlessEnv)
		return
	}
	const token = "nobody-token-77ab\n"
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	if err := os.WriteFile(marker, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t)
	base := e.seedBusybox(t)
	local, err := NewLocal(LocalOptions{Registry: e.reg, WorkDir: t.TempDir(), CacheDir: t.TempDir(), Init: sandboxInitProgram(t)})
	if err != nil {
		t.Fatal(err)
	}
	e.local = local
	root := t.TempDir()
	writeTree(t, root, map[string]tfile{
		"Dockerfile": {body: "FROM " + base + "\nRUN --mount=type=bind,source=hf,target=/etc/passwd,rw cat /etc/passwd; echo owned > /etc/passwd\n"},
		"hf":         {link: marker},
	})
	_, err = e.build(t, Request{Root: root, Platforms: []string{platformString(hostPlatform())}})
	if err != nil && strings.Contains(err.Error(), "operation not permitted") && !strings.Contains(err.Error(), "source=hf") {
		t.Skipf("unprivileged user namespaces are not allowed here: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "Dockerfile:2: RUN: --mount=type=bind,source=hf: ") {
		t.Errorf("err = %v, want the link refused at Dockerfile:2", err)
	}
	checkMarker(t, marker, token)
}

// reRunAsNobody runs the test name of a copy of the test binary as nobody
// with env set, and fails with its output unless it passed.
func reRunAsNobody(t *testing.T, name, env string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "fleetwright-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "build.test")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+name+"$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env+"=1", "TMPDIR="+dir, "HOME="+dir, "XDG_RUNTIME_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "--- SKIP") {
		t.Skipf("as nobody: %s", out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

// TestEscapeSecretEncoded: a RUN that prints a secret base64- or
// hex-encoded shows it masked, like the plain value.
func TestEscapeSecretEncoded(t *testing.T) {
	t.Parallel()
	const token = "tok-Value/with+chars?&=~9"
	re := newRunEnv(t, LocalOptions{
		Secrets:   map[string]SecretSource{"tok": {Env: "TOK"}},
		LookupEnv: func(k string) (string, bool) { return token, k == "TOK" },
	})
	df := "FROM BASE\nRUN --mount=type=secret,id=tok base64 /run/secrets/tok; base64 /run/secrets/tok | tr '+/' '-_'; od -An -tx1 /run/secrets/tok | tr -d ' \\n'; echo\n"
	res, err := re.buildRun(t, re.context(t, df, nil), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, re.output)
	}
	out := re.output.String()
	for _, form := range []string{base64.StdEncoding.EncodeToString([]byte(token)), base64.URLEncoding.EncodeToString([]byte(token)), hex.EncodeToString([]byte(token))} {
		if strings.Contains(out, form) {
			t.Errorf("the output holds the secret as %q:\n%s", form, out)
		}
	}
	if strings.Count(out, secretMask) < 3 {
		t.Errorf("the output masks fewer than 3 forms:\n%s", out)
	}
	checkNoSecret(t, re, res.Ref, out, token)
}

// TestEscapeSecretInLayer: a RUN that copies a secret into its layer, plain
// or encoded, fails naming the step and the secret, and nothing of the
// build reaches the registry.
func TestEscapeSecretInLayer(t *testing.T) {
	t.Parallel()
	const token = "tok-Value/with+chars?&=~9"
	re := newRunEnv(t, LocalOptions{
		Secrets:   map[string]SecretSource{"tok": {Env: "TOK"}},
		LookupEnv: func(k string) (string, bool) { return token, k == "TOK" },
	})
	for _, tt := range []struct{ name, cmd string }{
		{"copy", "cp /run/secrets/tok /leak"},
		{"base64", "base64 /run/secrets/tok > /leak"},
		{"base64url", "mkdir -p /opt && base64 /run/secrets/tok | tr '+/' '-_' > /opt/leak"},
		{"hex", "od -An -tx1 /run/secrets/tok | tr -d ' \\n' > /leak.hex"},
		{"env", "echo \"$T\" > /leak"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mount := "--mount=type=secret,id=tok"
			if tt.name == "env" {
				mount += ",env=T"
			}
			df := "FROM BASE\nRUN echo fine > /fine\nRUN " + mount + " " + tt.cmd + "\n"
			before := len(re.srv.Requests())
			_, err := re.buildRun(t, re.context(t, df, nil), nil)
			if err == nil || !strings.Contains(err.Error(), "Dockerfile:3: RUN ") || !strings.Contains(err.Error(), `secret "tok"`) {
				t.Errorf("err = %v, want the step at Dockerfile:3 and the secret named", err)
			} else if strings.Contains(err.Error(), token) {
				t.Errorf("the error holds the secret: %v", err)
			}
			for _, r := range re.srv.Requests()[before:] {
				if r.Method != "GET" && r.Method != "HEAD" {
					t.Errorf("the build sent %s %s", r.Method, r.Path)
				}
			}
			re.checkWorkDirEmpty(t)
		})
	}
}

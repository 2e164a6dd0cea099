package build

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fleetwright/fleetwright/internal/build/sandboxinit"
	"github.com/moby/profiles/seccomp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// defaultCaps is the capability set Docker and BuildKit give a container
// by default, no more: none of CAP_SYS_ADMIN, CAP_DAC_READ_SEARCH,
// CAP_SYS_MODULE, CAP_SYS_PTRACE, CAP_NET_ADMIN…
var defaultCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
	"CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
	"CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
}

// maskedPaths and readonlyPaths are Docker's defaults: the runtime hides
// the first (an empty file or folder over each) and makes the others
// read-only.
var (
	maskedPaths = []string{
		"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys",
		"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
		"/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
	}
	readonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

// cgroupParent is the cgroup, from the root of the hierarchy, under which
// each RUN gets its own (as root; without root no cgroup is made).
const cgroupParent = "/fleetwright"

// ociSpec is the runtime configuration of a RUN.
func ociSpec(s sandboxSpec, cgroup string) (*specs.Spec, error) {
	caps := &specs.LinuxCapabilities{Bounding: defaultCaps}
	if s.UID == 0 {
		caps.Effective, caps.Permitted = defaultCaps, defaultCaps
	}
	groups := s.Groups
	sp := &specs.Spec{
		Version: "1.0.2",
		Process: &specs.Process{
			User:            specs.User{UID: s.UID, GID: s.GID, AdditionalGids: groups},
			Args:            s.Args,
			Env:             s.Env,
			Cwd:             s.Dir,
			Capabilities:    caps,
			NoNewPrivileges: true,
		},
		Root:     &specs.Root{Path: s.Rootfs},
		Hostname: s.Hostname,
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace}, {Type: specs.IPCNamespace}, {Type: specs.UTSNamespace},
				{Type: specs.MountNamespace}, {Type: specs.UserNamespace},
			},
			MaskedPaths:   maskedPaths,
			ReadonlyPaths: readonlyPaths,
		},
	}
	if s.IDs.rootless {
		sp.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: s.IDs.base, Size: 1}}
		sp.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: s.IDs.gidBase, Size: 1}}
	} else {
		sp.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: s.IDs.base, Size: idRange}}
		sp.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: s.IDs.gidBase, Size: idRange}}
	}
	if !s.HostNetwork {
		sp.Linux.Namespaces = append(sp.Linux.Namespaces, specs.LinuxNamespace{Type: specs.NetworkNamespace})
	}
	if cgroup != "" {
		sp.Linux.CgroupsPath = cgroup
		sp.Linux.Resources = ociResources(s.Limits)
	}
	if s.Init != "" {
		// Our init is the container's pid 1; the command its child.
		sp.Process.Args = append([]string{sandboxinit.Path}, s.Args...)
	}
	mounts, err := ociMounts(s)
	if err != nil {
		return nil, err
	}
	sp.Mounts = mounts
	prof, err := seccomp.GetDefaultProfile(sp)
	if err != nil {
		return nil, fmt.Errorf("seccomp profile: %w", err)
	}
	sp.Linux.Seccomp = prof
	return sp, nil
}

// ociResources is the cgroup configuration of a RUN: no devices, and the
// memory (swap included), process and CPU limits.
func ociResources(limits Limits) *specs.LinuxResources {
	l := limits.withDefaults()
	period := uint64(100000)
	quota := int64(l.CPUs * float64(period))
	return &specs.LinuxResources{
		Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
		Memory:  &specs.LinuxMemory{Limit: &l.Memory, Swap: &l.Memory},
		Pids:    &specs.LinuxPids{Limit: &l.Pids},
		CPU:     &specs.LinuxCPU{Quota: &quota, Period: &period},
	}
}

// ociMounts is what a RUN's container mounts: the kernel's filesystems,
// our init, the heredoc scripts, /etc/hosts and /etc/resolv.conf, then
// the RUN's own mounts.
func ociMounts(s sandboxSpec) ([]specs.Mount, error) {
	ptsOpts := []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}
	if !s.IDs.rootless {
		ptsOpts = append(ptsOpts, "gid=5") // tty
	}
	mounts := []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: ptsOpts},
		{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
	}
	if s.HostNetwork {
		// sysfs needs a network namespace of the RUN's own user namespace;
		// with the host's network the host's /sys is shown read-only.
		mounts = append(mounts, specs.Mount{Destination: "/sys", Type: "none", Source: "/sys", Options: []string{"rbind", "nosuid", "noexec", "nodev", "ro"}})
	} else {
		mounts = append(mounts, specs.Mount{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}})
	}
	if s.Init != "" {
		// The container's pid 1, read-only on the container's /dev tmpfs
		// (so in no layer).
		mounts = append(mounts, specs.Mount{Destination: sandboxinit.Path, Type: "bind", Source: s.Init, Options: []string{"bind", "ro", "nosuid", "nodev"}})
	}
	if s.Pipes != "" {
		mounts = append(mounts, specs.Mount{Destination: "/dev/pipes", Type: "bind", Source: s.Pipes, Options: []string{"bind", "ro", "nosuid", "nodev"}})
	}
	for _, f := range []struct{ src, dst string }{{s.Hosts, "/etc/hosts"}, {s.Resolv, "/etc/resolv.conf"}} {
		if f.src != "" {
			mounts = append(mounts, specs.Mount{Destination: f.dst, Type: "bind", Source: f.src, Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}})
		}
	}
	for _, m := range s.Mounts {
		switch m.Kind {
		case "bind":
			mode := "rw"
			if m.ReadOnly {
				mode = "ro"
			}
			mounts = append(mounts, specs.Mount{Destination: m.Target, Type: "bind", Source: m.Source, Options: []string{"bind", mode, "nosuid", "nodev"}})
		case "tmpfs":
			opts := []string{"nosuid", "nodev", "mode=1777"}
			if m.Size > 0 {
				opts = append(opts, "size="+strconv.FormatInt(m.Size, 10))
			}
			mounts = append(mounts, specs.Mount{Destination: m.Target, Type: "tmpfs", Source: "tmpfs", Options: opts})
		case "secret":
			mounts = append(mounts, specs.Mount{Destination: m.Target, Type: "bind", Source: m.Source, Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}})
		default:
			return nil, fmt.Errorf("mount type %q", m.Kind)
		}
	}
	return mounts, nil
}

// runSandbox runs spec's command with the OCI runtime rt (runc or crun)
// and reports how it ended. Output goes to out; the runtime's own messages
// go to a log file, read back when it fails.
//
// The command is never the container's pid 1, so that it is no init
// either (a signal it sends itself is not ignored; `kill -9 $$` kills it).
// With spec.Init, pid 1 is that statically linked executable (package
// sandboxinit): it runs the command as its child, ends every other process
// of the container when the command has ended and writes its exit code to
// a pipe; one runtime call (run --detach) creates and starts the
// container. Without it, pid 1 is the runtime's own init, left waiting in a
// created container, and the command is executed in it (a second call,
// exec). render holds a pidfd of the container's pid 1 while it runs; when
// the command has ended, or the context ends, render kills that pid 1, and
// with it every process left in the container, and waits until it is
// gone; the runtime then deletes the container, on bg when given.
//
// On return, in this order: the pidfd is closed, the pipes are closed
// (after the output copied from them has reached out), a container left
// created is deleted, and the bundle is removed.
func runSandbox(ctx context.Context, rt, state string, spec sandboxSpec, out io.Writer, bg *sync.WaitGroup) (sandboxResult, error) {
	var res sandboxResult
	r := newSandboxRun(rt, state, spec)
	sp, err := ociSpec(spec, r.cgroup)
	if err != nil {
		return res, err
	}
	if err := os.MkdirAll(spec.Bundle, 0o700); err != nil {
		return res, err
	}
	defer os.RemoveAll(spec.Bundle)
	if err := r.writeBundle(sp); err != nil {
		return res, err
	}
	defer func() {
		if r.created {
			r.deleteContainer()
		}
	}()
	defer r.close()
	if err := r.start(out); err != nil {
		return res, err
	}
	if err := r.openInit(); err != nil {
		return res, err
	}
	if r.init >= 0 {
		defer unix.Close(r.init)
	}
	status, waitErr, err := r.wait(ctx, out)
	if err != nil {
		return res, err
	}
	if res, err = r.end(bg); err != nil {
		return res, err
	}
	return r.result(ctx, res, status, waitErr)
}

// sandboxRun is one run of a RUN's container by an OCI runtime, from its
// bundle to its deletion; runSandbox calls its steps in order.
type sandboxRun struct {
	rt, state string
	spec      sandboxSpec
	id        string
	cgroup    string // from the hierarchy's root; "" for none (rootless)
	logFile   string // the runtime's log, in the bundle
	pidFile   string // where the runtime writes the pid of the container's pid 1
	// created: the container exists, and is deleted on return.
	created bool
	// With spec.Init: the container's output, copied to out until copied
	// is closed, and the init's exit status.
	outR, statusR *os.File
	copied        chan struct{}
	// closers run in reverse order on return (close).
	closers []func()
	// init is a pidfd of the container's pid 1; -1 once it is known gone.
	init int
}

// newSandboxRun names the container of a run of spec: a random id, its
// cgroup (as root), its log and pid files in the bundle.
func newSandboxRun(rt, state string, spec sandboxSpec) *sandboxRun {
	var rnd [8]byte
	rand.Read(rnd[:])
	r := &sandboxRun{rt: rt, state: state, spec: spec, id: "fleetwright-" + hex.EncodeToString(rnd[:]), init: -1}
	if !spec.IDs.rootless {
		r.cgroup = cgroupParent + "/" + r.id
	}
	r.logFile = filepath.Join(spec.Bundle, "runtime.log")
	r.pidFile = filepath.Join(spec.Bundle, "pid")
	return r
}

// writeBundle writes the runtime configuration sp into the bundle and,
// for exec without an init of ours, the command's process.json.
func (r *sandboxRun) writeBundle(sp *specs.Spec) error {
	files := map[string]any{"config.json": sp}
	if r.spec.Init == "" {
		files["process.json"] = sp.Process
	}
	for name, v := range files {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(r.spec.Bundle, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// runtime is a call of the runtime with its state folder and log file.
func (r *sandboxRun) runtime(args ...string) *exec.Cmd {
	return exec.Command(r.rt, append([]string{"--root", r.state, "--log", r.logFile, "--log-format", "json"}, args...)...)
}

// failed is the error of the runtime call what: the last error the
// runtime logged, else err.
func (r *sandboxRun) failed(what string, err error) error {
	if msg := runtimeError(r.logFile); msg != "" {
		return &sandboxError{msg: fmt.Sprintf("%s %s: %s", filepath.Base(r.rt), what, msg)}
	}
	return fmt.Errorf("%s %s: %w", filepath.Base(r.rt), what, err)
}

// deleteContainer deletes the container, its state and cgroup. It runs
// without the log file: the bundle folder holding it may be gone when a
// deletion on bg runs.
func (r *sandboxRun) deleteContainer() error {
	return exec.Command(r.rt, "--root", r.state, "delete", "--force", r.id).Run()
}

// onReturn makes close run f, before what was given to it earlier.
func (r *sandboxRun) onReturn(f func()) { r.closers = append(r.closers, f) }

// close runs what onReturn was given, the last first.
func (r *sandboxRun) close() {
	for _, f := range slices.Backward(r.closers) {
		f()
	}
}

// start creates the container: with spec.Init created and started in one
// call (run --detach), otherwise created with the runtime's init waiting
// in it.
func (r *sandboxRun) start(out io.Writer) error {
	create := r.runtime("create", "--bundle", r.spec.Bundle, "--pid-file", r.pidFile, r.id)
	var err error
	if r.spec.Init != "" {
		outW, statusW, perr := r.openPipes(out)
		if perr != nil {
			return perr
		}
		// One call creates and starts the container.
		create.Args = slices.Insert(create.Args, len(create.Args)-1, "--preserve-fds", "1")
		create.Args[slices.Index(create.Args, "create")] = "run"
		create.Args = slices.Insert(create.Args, len(create.Args)-1, "--detach")
		create.Stdout, create.Stderr = outW, outW
		create.ExtraFiles = []*os.File{statusW}
		err = create.Run()
		outW.Close()
		statusW.Close()
	} else {
		// The container's pid 1 keeps the stdio of create: /dev/null, so
		// that nothing waits for it to close a pipe.
		err = create.Run()
	}
	if err != nil {
		if _, serr := os.Stat(filepath.Join(r.state, r.id)); serr == nil {
			r.created = true
		}
		return r.failed("create", err)
	}
	r.created = true
	return nil
}

// openPipes makes the pipes of a container with our init: the container's
// processes write to outW (the runtime passes the stdio of its call on),
// copied to out from here on, the init its exit code to statusW, its fd 3.
// Every end is closed on return, the output copied before.
func (r *sandboxRun) openPipes(out io.Writer) (outW, statusW *os.File, err error) {
	outR, outW, err := r.pipe()
	if err != nil {
		return nil, nil, err
	}
	statusR, statusW, err := r.pipe()
	if err != nil {
		return nil, nil, err
	}
	r.outR, r.statusR = outR, statusR
	copied := make(chan struct{})
	r.copied = copied
	go func() {
		io.Copy(out, outR)
		close(copied)
	}()
	// Nothing is written to out once runSandbox has returned.
	r.onReturn(func() {
		outR.Close()
		<-copied
	})
	return outW, statusW, nil
}

// pipe makes a pipe whose ends are closed on return, the writer first.
func (r *sandboxRun) pipe() (*os.File, *os.File, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	r.onReturn(func() { pr.Close() })
	r.onReturn(func() { pw.Close() })
	return pr, pw, nil
}

// openInit opens a pidfd of the container's pid 1 into r.init, or leaves
// it -1 when a container with our init has ended already.
func (r *sandboxRun) openInit() error {
	init, err := openInit(r.pidFile)
	if r.spec.Init != "" {
		// The container runs already: its init may have ended, and its
		// pid been reused, before the pidfd was opened. The init holds
		// the status pipe open while it runs: the pidfd is its if the pipe
		// has a writer still. An init that has ended has ended every
		// process of the container before (package sandboxinit).
		if err != nil && errors.Is(err, unix.ESRCH) || err == nil && pipeClosed(r.statusR) {
			if err == nil {
				unix.Close(init)
			}
			init, err = -1, nil
		}
	}
	if err != nil {
		return fmt.Errorf("%s create: the container's pid 1: %w", filepath.Base(r.rt), err)
	}
	r.init = init
	return nil
}

// wait waits until the command has ended, or ctx has: with our init for
// the exit status it writes, otherwise for the runtime's exec (waitErr).
func (r *sandboxRun) wait(ctx context.Context, out io.Writer) (status []byte, waitErr, err error) {
	if r.spec.Init == "" {
		waitErr, err := r.exec(ctx, out)
		return nil, waitErr, err
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r.statusR, 64))
		got <- b
	}()
	select {
	case status = <-got:
	case <-ctx.Done():
	}
	return status, nil, nil
}

// exec executes the command in the created container and waits until it
// has ended (waitErr is how), or ctx has: then it kills the container's
// pid 1, and with it the pid namespace; the runtime's exec then returns.
// If it does not, exec kills that too.
func (r *sandboxRun) exec(ctx context.Context, out io.Writer) (waitErr, err error) {
	cmd := r.runtime("exec", "--process", filepath.Join(r.spec.Bundle, "process.json"), r.id)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", r.rt, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case waitErr = <-done:
	case <-ctx.Done():
		killInit(r.init)
		select {
		case waitErr = <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			waitErr = <-done
		}
	}
	return waitErr, nil
}

// end ends the container once its command has: every process of the RUN
// ends with the pid namespace's init, before the layer is computed, and
// its output has reached out. It reads which limits the cgroup hit, then
// deletes the container: on bg when given, while the build goes on.
func (r *sandboxRun) end(bg *sync.WaitGroup) (sandboxResult, error) {
	var res sandboxResult
	if r.init >= 0 {
		if err := killInit(r.init); err != nil {
			return res, fmt.Errorf("ending the container: %w", err)
		}
	}
	if r.copied != nil {
		select {
		case <-r.copied:
		case <-time.After(10 * time.Second):
			r.outR.Close()
		}
	}
	if r.cgroup != "" {
		res.OOMKilled, res.PidsMax = cgroupEvents(r.cgroup)
	}
	r.created = false
	if bg != nil {
		bg.Go(func() { r.deleteContainer() })
	} else if err := r.deleteContainer(); err != nil {
		if _, serr := os.Stat(filepath.Join(r.state, r.id)); serr == nil {
			return res, fmt.Errorf("%s delete: %w", filepath.Base(r.rt), err)
		}
	}
	return res, nil
}

// result completes res with how the command ended: the exit status our
// init wrote, or that of the runtime's exec (waitErr); an error when ctx
// ended or the runtime logged one.
func (r *sandboxRun) result(ctx context.Context, res sandboxResult, status []byte, waitErr error) (sandboxResult, error) {
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if msg := runtimeError(r.logFile); msg != "" {
		return res, &sandboxError{msg: fmt.Sprintf("%s: %s", filepath.Base(r.rt), msg)}
	}
	if r.spec.Init != "" {
		n, err := strconv.Atoi(strings.TrimSpace(string(status)))
		if err == nil {
			res.Exit = n
			return res, nil
		}
		// The init was killed before it could tell: by the kernel's
		// out-of-memory killer, or at the process limit.
		if res.OOMKilled || res.PidsMax {
			res.Exit = 137
			return res, nil
		}
		return res, fmt.Errorf("%s: the container's pid 1 ended without the command's exit code", filepath.Base(r.rt))
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		res.Exit = ee.ExitCode()
		if ws, ok := ee.Sys().(interface{ Signaled() bool }); ok && ws.Signaled() {
			res.Exit = 137
		}
		return res, nil
	}
	if waitErr != nil {
		return res, fmt.Errorf("%s: %w", r.rt, waitErr)
	}
	return res, nil
}

// pipeClosed reports whether every writer of the pipe r reads from has
// closed it.
func pipeClosed(r *os.File) bool {
	rc, err := r.SyscallConn()
	if err != nil {
		return false
	}
	hup := false
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
			hup = fds[0].Revents&unix.POLLHUP != 0
		}
	})
	return hup
}

// openInit returns a pidfd of the process whose pid the runtime wrote to
// pidFile: the container's pid 1, alive while the container is created.
func openInit(pidFile string) (int, error) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return -1, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return -1, fmt.Errorf("pid file %q", b)
	}
	return unix.PidfdOpen(pid, 0)
}

// killInit kills the process of the pidfd and waits until it has exited:
// for a pid namespace's init, after every other process in it.
func killInit(fd int) error {
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return err
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 30_000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("the container's pid 1 did not exit within 30s of SIGKILL")
		}
		return nil
	}
}

// runtimeError returns the last error the runtime logged, "" if none.
func runtimeError(logFile string) string {
	f, err := os.Open(logFile)
	if err != nil {
		return ""
	}
	defer f.Close()
	var last string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && (e.Level == "error" || e.Level == "fatal") {
			last = e.Msg
		}
	}
	return last
}

// cgroupEvents reads whether the memory or the process limit of a RUN's
// cgroup was hit (cgroup v2, or v1's memory and pids hierarchies).
func cgroupEvents(cgroup string) (oom, pidsMax bool) {
	const root = "/sys/fs/cgroup"
	counter := func(file, key string) bool {
		b, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, " "); ok && k == key {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				return n > 0
			}
		}
		return false
	}
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		dir := filepath.Join(root, cgroup)
		return counter(filepath.Join(dir, "memory.events"), "oom_kill"), counter(filepath.Join(dir, "pids.events"), "max")
	}
	return counter(filepath.Join(root, "memory", cgroup, "memory.oom_control"), "oom_kill"),
		counter(filepath.Join(root, "pids", cgroup, "pids.events"), "max")
}

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
		l := s.Limits.withDefaults()
		period := uint64(100000)
		quota := int64(l.CPUs * float64(period))
		sp.Linux.CgroupsPath = cgroup
		sp.Linux.Resources = &specs.LinuxResources{
			Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
			Memory:  &specs.LinuxMemory{Limit: &l.Memory, Swap: &l.Memory},
			Pids:    &specs.LinuxPids{Limit: &l.Pids},
			CPU:     &specs.LinuxCPU{Quota: &quota, Period: &period},
		}
	}
	ptsOpts := []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}
	if !s.IDs.rootless {
		ptsOpts = append(ptsOpts, "gid=5") // tty
	}
	sp.Mounts = []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: ptsOpts},
		{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
	}
	if s.HostNetwork {
		// sysfs needs a network namespace of the RUN's own user namespace;
		// with the host's network the host's /sys is shown read-only.
		sp.Mounts = append(sp.Mounts, specs.Mount{Destination: "/sys", Type: "none", Source: "/sys", Options: []string{"rbind", "nosuid", "noexec", "nodev", "ro"}})
	} else {
		sp.Mounts = append(sp.Mounts, specs.Mount{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}})
	}
	if s.Init != "" {
		// The container's pid 1, read-only on the container's /dev tmpfs
		// (so in no layer).
		sp.Process.Args = append([]string{sandboxinit.Path}, s.Args...)
		sp.Mounts = append(sp.Mounts, specs.Mount{Destination: sandboxinit.Path, Type: "bind", Source: s.Init, Options: []string{"bind", "ro", "nosuid", "nodev"}})
	}
	if s.Pipes != "" {
		sp.Mounts = append(sp.Mounts, specs.Mount{Destination: "/dev/pipes", Type: "bind", Source: s.Pipes, Options: []string{"bind", "ro", "nosuid", "nodev"}})
	}
	for _, f := range []struct{ src, dst string }{{s.Hosts, "/etc/hosts"}, {s.Resolv, "/etc/resolv.conf"}} {
		if f.src != "" {
			sp.Mounts = append(sp.Mounts, specs.Mount{Destination: f.dst, Type: "bind", Source: f.src, Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}})
		}
	}
	for _, m := range s.Mounts {
		switch m.Kind {
		case "bind":
			mode := "rw"
			if m.ReadOnly {
				mode = "ro"
			}
			sp.Mounts = append(sp.Mounts, specs.Mount{Destination: m.Target, Type: "bind", Source: m.Source, Options: []string{"bind", mode, "nosuid", "nodev"}})
		case "tmpfs":
			opts := []string{"nosuid", "nodev", "mode=1777"}
			if m.Size > 0 {
				opts = append(opts, "size="+strconv.FormatInt(m.Size, 10))
			}
			sp.Mounts = append(sp.Mounts, specs.Mount{Destination: m.Target, Type: "tmpfs", Source: "tmpfs", Options: opts})
		case "secret":
			sp.Mounts = append(sp.Mounts, specs.Mount{Destination: m.Target, Type: "bind", Source: m.Source, Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}})
		default:
			return nil, fmt.Errorf("mount type %q", m.Kind)
		}
	}
	prof, err := seccomp.GetDefaultProfile(sp)
	if err != nil {
		return nil, fmt.Errorf("seccomp profile: %w", err)
	}
	sp.Linux.Seccomp = prof
	return sp, nil
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
func runSandbox(ctx context.Context, rt, state string, spec sandboxSpec, out io.Writer, bg *sync.WaitGroup) (sandboxResult, error) {
	var res sandboxResult
	var rnd [8]byte
	rand.Read(rnd[:])
	id := "fleetwright-" + hex.EncodeToString(rnd[:])
	cgroup := ""
	if !spec.IDs.rootless {
		cgroup = cgroupParent + "/" + id
	}
	sp, err := ociSpec(spec, cgroup)
	if err != nil {
		return res, err
	}
	if err := os.MkdirAll(spec.Bundle, 0o700); err != nil {
		return res, err
	}
	defer os.RemoveAll(spec.Bundle)
	files := map[string]any{"config.json": sp}
	if spec.Init == "" {
		files["process.json"] = sp.Process
	}
	for name, v := range files {
		b, err := json.Marshal(v)
		if err != nil {
			return res, err
		}
		if err := os.WriteFile(filepath.Join(spec.Bundle, name), b, 0o600); err != nil {
			return res, err
		}
	}
	logFile := filepath.Join(spec.Bundle, "runtime.log")
	runtime := func(args ...string) *exec.Cmd {
		return exec.Command(rt, append([]string{"--root", state, "--log", logFile, "--log-format", "json"}, args...)...)
	}
	failed := func(what string, err error) error {
		if msg := runtimeError(logFile); msg != "" {
			return &sandboxError{msg: fmt.Sprintf("%s %s: %s", filepath.Base(rt), what, msg)}
		}
		return fmt.Errorf("%s %s: %w", filepath.Base(rt), what, err)
	}
	created := false
	// Without the log file: the bundle folder holding it may be gone when a
	// deletion on bg runs.
	deleteContainer := func() error { return exec.Command(rt, "--root", state, "delete", "--force", id).Run() }
	defer func() {
		if created {
			deleteContainer()
		}
	}()
	pidFile := filepath.Join(spec.Bundle, "pid")
	create := runtime("create", "--bundle", spec.Bundle, "--pid-file", pidFile, id)
	var (
		outR, statusR *os.File
		copied        chan struct{}
	)
	if spec.Init != "" {
		// The container's processes write to outW (the runtime passes the
		// stdio of create on), the init its exit code to statusW, its fd 3.
		var outW, statusW *os.File
		if outR, outW, err = os.Pipe(); err != nil {
			return res, err
		}
		defer outR.Close()
		defer outW.Close()
		if statusR, statusW, err = os.Pipe(); err != nil {
			return res, err
		}
		defer statusR.Close()
		defer statusW.Close()
		copied = make(chan struct{})
		go func() {
			io.Copy(out, outR)
			close(copied)
		}()
		// Nothing is written to out once runSandbox has returned.
		defer func() {
			outR.Close()
			<-copied
		}()
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
		if _, serr := os.Stat(filepath.Join(state, id)); serr == nil {
			created = true
		}
		return res, failed("create", err)
	}
	created = true
	init, err := openInit(pidFile)
	if spec.Init != "" {
		// The container runs already: its init may have ended, and its
		// pid been reused, before the pidfd was opened. The init holds
		// the status pipe open while it runs: the pidfd is its if the pipe
		// has a writer still. An init that has ended has ended every
		// process of the container before (package sandboxinit).
		if err != nil && errors.Is(err, unix.ESRCH) || err == nil && pipeClosed(statusR) {
			if err == nil {
				unix.Close(init)
			}
			init, err = -1, nil
		}
	}
	if err != nil {
		return res, fmt.Errorf("%s create: the container's pid 1: %w", filepath.Base(rt), err)
	}
	if init >= 0 {
		defer unix.Close(init)
	}

	var (
		status  []byte
		waitErr error
	)
	if spec.Init != "" {
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(io.LimitReader(statusR, 64))
			got <- b
		}()
		select {
		case status = <-got:
		case <-ctx.Done():
		}
	} else {
		cmd := runtime("exec", "--process", filepath.Join(spec.Bundle, "process.json"), id)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			return res, fmt.Errorf("starting %s: %w", rt, err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case waitErr = <-done:
		case <-ctx.Done():
			// Kill the container's pid 1, and with it the pid namespace; the
			// runtime's exec then returns. If it does not, kill it too.
			killInit(init)
			select {
			case waitErr = <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				waitErr = <-done
			}
		}
	}
	// Every process of the RUN ends with the pid namespace's init, before
	// the layer is computed. Removing the container (its state and
	// cgroup) can wait: bg runs it while the build goes on.
	if init >= 0 {
		if err := killInit(init); err != nil {
			return res, fmt.Errorf("ending the container: %w", err)
		}
	}
	if copied != nil {
		select {
		case <-copied:
		case <-time.After(10 * time.Second):
			outR.Close()
		}
	}
	if cgroup != "" {
		res.OOMKilled, res.PidsMax = cgroupEvents(cgroup)
	}
	created = false
	if bg != nil {
		bg.Go(func() { deleteContainer() })
	} else if err := deleteContainer(); err != nil {
		if _, serr := os.Stat(filepath.Join(state, id)); serr == nil {
			return res, fmt.Errorf("%s delete: %w", filepath.Base(rt), err)
		}
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if msg := runtimeError(logFile); msg != "" {
		return res, &sandboxError{msg: fmt.Sprintf("%s: %s", filepath.Base(rt), msg)}
	}
	if spec.Init != "" {
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
		return res, fmt.Errorf("%s: the container's pid 1 ended without the command's exit code", filepath.Base(rt))
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
		return res, fmt.Errorf("%s: %w", rt, waitErr)
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

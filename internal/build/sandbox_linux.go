package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// runSandbox runs spec's command in new namespaces and returns its exit
// code. Output goes to out. The context's end kills the sandbox's init,
// and the kernel kills every process of its pid namespace with it.
func runSandbox(ctx context.Context, spec sandboxSpec, out io.Writer) (int, error) {
	specR, specW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer specR.Close()
	defer specW.Close()
	statR, statW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer statR.Close()
	defer statW.Close()

	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = []string{"fleetwright-build-sandbox"}
	cmd.Env = []string{sandboxEnv + "=1"}
	cmd.ExtraFiles = []*os.File{specR, statW}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	cmd.WaitDelay = 5 * time.Second
	flags := uintptr(syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC)
	if !spec.HostNetwork {
		flags |= syscall.CLONE_NEWNET
	}
	attr := &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
	if spec.Rootless {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting the RUN sandbox: %w", err)
	}
	specR.Close()
	statW.Close()
	enc := json.NewEncoder(specW)
	werr := enc.Encode(spec)
	specW.Close()
	status, _ := io.ReadAll(io.LimitReader(statR, 64<<10))
	err = cmd.Wait()
	if werr != nil && ctx.Err() == nil {
		return 0, fmt.Errorf("RUN sandbox: sending its spec: %w", werr)
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if len(bytes.TrimSpace(status)) > 0 {
		var st sandboxStatus
		if json.Unmarshal(status, &st) == nil && st.Err != "" {
			if st.NotFound {
				return 127, &sandboxError{msg: st.Err, notFound: true}
			}
			return 0, &sandboxError{msg: st.Err}
		}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("RUN sandbox: %w", err)
	}
	return 0, nil
}

// sandboxInit is the sandbox's pid 1: it sets the mounts up, enters the
// root filesystem, starts the command, waits for it and exits with its
// code. Everything else in the pid namespace dies when it exits.
func sandboxInit() int {
	specF := os.NewFile(3, "spec")
	statF := os.NewFile(4, "status")
	fail := func(notFound bool, format string, a ...any) int {
		json.NewEncoder(statF).Encode(sandboxStatus{Err: fmt.Sprintf(format, a...), NotFound: notFound})
		statF.Close()
		if notFound {
			return 127
		}
		return 125
	}
	var spec sandboxSpec
	if err := json.NewDecoder(specF).Decode(&spec); err != nil {
		return fail(false, "RUN sandbox: reading its spec: %v", err)
	}
	specF.Close()
	if err := setupSandbox(&spec); err != nil {
		return fail(false, "RUN sandbox: %v", err)
	}
	argv0, err := lookPathIn(spec.Args[0], spec.Env)
	if err != nil {
		return fail(true, "%s: %v", spec.Args[0], err)
	}
	if fi, err := os.Stat(argv0); err != nil {
		return fail(true, "%s: no such file in the image", argv0)
	} else if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fail(false, "%s: not an executable file", argv0)
	}
	cmd := exec.Command(argv0)
	cmd.Args = spec.Args
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.Stdin = nil // /dev/null
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cred := &syscall.Credential{Uid: spec.UID, Gid: spec.GID, Groups: spec.Groups, NoSetGroups: spec.Rootless}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setsid: true}
	if err := cmd.Start(); err != nil {
		var pe *os.PathError
		notFound := errors.As(err, &pe) && errors.Is(err, syscall.ENOENT)
		return fail(notFound, "%s: %v", spec.Args[0], err)
	}
	statF.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 126
	}
	return 0
}

// lookPathIn finds file as exec.LookPath would with the sandbox's PATH.
func lookPathIn(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	pathEnv := defaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		p := path.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("not found in $PATH (%s)", pathEnv)
}

func mountErr(what, target string, err error) error {
	return fmt.Errorf("mounting %s on %s: %w", what, target, err)
}

// setupSandbox makes the sandbox's mounts, then pivots into its root.
func setupSandbox(spec *sandboxSpec) error {
	root := spec.Rootfs
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return mountErr("private propagation", "/", err)
	}
	if err := syscall.Mount(root, root, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return mountErr("the root filesystem", root, err)
	}
	in := func(p string) string { return filepath.Join(root, p) }
	if err := syscall.Mount("proc", in("/proc"), "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return mountErr("proc", "/proc", err)
	}
	// sysfs needs a network namespace of the sandbox's own user namespace;
	// a tool that reads /sys works without it, so a failure is not fatal.
	if fi, err := os.Lstat(in("/sys")); err == nil && fi.IsDir() {
		_ = syscall.Mount("sysfs", in("/sys"), "sysfs", syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
	}
	if err := setupDev(in("/dev"), spec.Scripts); err != nil {
		return err
	}
	for _, f := range []struct{ src, dst string }{{spec.Hosts, "/etc/hosts"}, {spec.Resolv, "/etc/resolv.conf"}} {
		if f.src == "" {
			continue
		}
		if err := bindMount(f.src, in(f.dst), true); err != nil {
			return err
		}
	}
	for i, m := range spec.Mounts {
		target := in(m.Target)
		switch m.Kind {
		case "bind":
			if err := bindMount(m.Source, target, m.ReadOnly); err != nil {
				return err
			}
		case "tmpfs":
			opts := "mode=1777"
			if m.Size > 0 {
				opts += fmt.Sprintf(",size=%d", m.Size)
			}
			if err := syscall.Mount("tmpfs", target, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
				return mountErr("tmpfs", m.Target, err)
			}
		case "secret":
			// The content lives in the sandbox's /dev tmpfs, bound on the
			// target, and the staging name is removed: it is never on disk.
			stage := in(fmt.Sprintf("/dev/.secret-%d", i))
			if err := os.WriteFile(stage, m.Data, 0o600); err != nil {
				return fmt.Errorf("writing secret: %w", err)
			}
			if err := os.Chmod(stage, os.FileMode(m.Mode&0o777)); err != nil {
				return err
			}
			if err := os.Lchown(stage, int(m.UID), int(m.GID)); err != nil && !spec.Rootless {
				return err
			}
			if err := bindMount(stage, target, true); err != nil {
				return err
			}
			os.Remove(stage)
		default:
			return fmt.Errorf("mount type %q", m.Kind)
		}
	}
	if !spec.HostNetwork {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("bringing up lo: %w", err)
		}
	}
	if err := syscall.Sethostname([]byte(spec.Hostname)); err != nil {
		return fmt.Errorf("setting the host name: %w", err)
	}
	// pivot_root with the old root stacked on the new one, then detached:
	// nothing of the host's tree stays reachable.
	if err := syscall.Chdir(root); err != nil {
		return err
	}
	if err := syscall.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := syscall.Unmount(".", syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the old root: %w", err)
	}
	if err := syscall.Chdir("/"); err != nil {
		return err
	}
	if spec.Dir != "" {
		if err := os.MkdirAll(spec.Dir, 0o755); err != nil {
			return fmt.Errorf("working directory: %w", err)
		}
	}
	return nil
}

func bindMount(src, dst string, readOnly bool) error {
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return mountErr(src, dst, err)
	}
	if readOnly {
		flags := uintptr(syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY)
		if err := syscall.Mount("", dst, "", flags|syscall.MS_NOSUID|syscall.MS_NODEV, ""); err != nil {
			// A mount locked by a user namespace keeps its nosuid/nodev
			// flags; retry without changing them.
			if err := syscall.Mount("", dst, "", flags, ""); err != nil {
				return mountErr("read-only "+src, dst, err)
			}
		}
	}
	return nil
}

// setupDev mounts a tmpfs on dev with the usual device nodes (bound from
// the host's, which works in a user namespace too), links, a devpts and a
// /dev/shm.
func setupDev(dev string, scripts map[string]string) error {
	if err := syscall.Mount("tmpfs", dev, "tmpfs", syscall.MS_NOSUID, "mode=755,size=65536k"); err != nil {
		return mountErr("tmpfs", "/dev", err)
	}
	for _, name := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		p := filepath.Join(dev, name)
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			return err
		}
		if err := bindMount("/dev/"+name, p, false); err != nil {
			return err
		}
	}
	links := map[string]string{
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
		"stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx", "core": "/proc/kcore",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return err
		}
	}
	for _, d := range []string{"pts", "shm", "mqueue", "pipes"} {
		if err := os.Mkdir(filepath.Join(dev, d), 0o755); err != nil {
			return err
		}
	}
	// Without devpts a RUN still works; only programs that want a terminal
	// notice.
	_ = syscall.Mount("devpts", filepath.Join(dev, "pts"), "devpts", syscall.MS_NOSUID|syscall.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
	if err := syscall.Mount("shm", filepath.Join(dev, "shm"), "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "mode=1777,size=65536k"); err != nil {
		return mountErr("tmpfs", "/dev/shm", err)
	}
	_ = syscall.Mount("mqueue", filepath.Join(dev, "mqueue"), "mqueue", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
	for name, data := range scripts {
		if err := os.WriteFile(filepath.Join(dev, "pipes", name), []byte(data), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// loopbackUp sets the flags of the new network namespace's lo to up.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var req struct {
		name  [syscall.IFNAMSIZ]byte
		flags uint16
		_     [22]byte
	}
	copy(req.name[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&req))); e != 0 {
		return e
	}
	req.flags |= syscall.IFF_UP | syscall.IFF_RUNNING
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&req))); e != 0 {
		return e
	}
	return nil
}

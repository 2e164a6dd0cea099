package build

import "os"

// sandboxEnv marks a process started as the init of a RUN sandbox: the
// builder re-executes its own program (/proc/self/exe) with it set, in new
// namespaces, and the package's init function takes over before main.
const sandboxEnv = "FLEETWRIGHT_BUILD_SANDBOX"

// sandboxSpec is what the sandbox init is told over its spec pipe.
type sandboxSpec struct {
	Rootfs   string
	Args     []string
	Env      []string
	Dir      string
	UID      uint32
	GID      uint32
	Groups   []uint32
	Rootless bool
	Hostname string
	// HostNetwork leaves the network namespace out; otherwise the sandbox
	// has only a loopback interface.
	HostNetwork bool
	Hosts       string // host path bind-mounted at /etc/hosts
	Resolv      string // host path bind-mounted at /etc/resolv.conf
	Mounts      []sandboxMount
	// Scripts are written to /dev/pipes (a tmpfs) before the command runs:
	// heredocs with a #! line.
	Scripts map[string]string
}

// sandboxMount is one RUN --mount, resolved.
type sandboxMount struct {
	Kind     string // "bind", "tmpfs" or "secret"
	Source   string // host path (bind)
	Target   string // absolute path in the sandbox
	ReadOnly bool
	Data     []byte // secret content, written to a tmpfs
	Mode     uint32 // secret file mode
	UID, GID uint32 // secret file owner
	Size     int64  // tmpfs size limit in bytes; 0 means the kernel default
}

// sandboxStatus is what the init reports before it runs the command:
// empty on success, else why it could not.
type sandboxStatus struct {
	Err      string
	NotFound bool
}

func init() {
	if os.Getenv(sandboxEnv) == "1" {
		os.Exit(sandboxInit())
	}
}

// MaybeRunInit runs the RUN sandbox's init and exits when the process was
// started as one. The package's init function already does this, so a
// program that imports the package needs no call; it exists for programs
// that want the hand-over to be visible in main.
func MaybeRunInit() {
	if os.Getenv(sandboxEnv) == "1" {
		os.Exit(sandboxInit())
	}
}

// sandboxError is a sandbox that could not be set up, or a command that
// could not be started in it.
type sandboxError struct {
	msg      string
	notFound bool
}

func (e *sandboxError) Error() string { return e.msg }

// SkipRunEnv, set to 1, lets the RUN tests skip on a machine without
// Debian's busybox-static, the base of their test images.
const SkipRunEnv = "FLEETWRIGHT_SKIP_RUN"

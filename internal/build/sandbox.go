package build

import (
	"fmt"
	"strings"
)

// sandboxSpec is one RUN (or one run of an image's entrypoint) as the OCI
// runtime gets it: what runs, as whom, where, with which mounts.
type sandboxSpec struct {
	Rootfs   string // host path of the root filesystem
	Bundle   string // host folder for the bundle's config.json
	Args     []string
	Env      []string
	Dir      string
	UID      uint32
	GID      uint32
	Groups   []uint32
	Hostname string
	// HostNetwork leaves the network namespace out; otherwise the sandbox
	// has only a loopback interface.
	HostNetwork bool
	Hosts       string // host path bind-mounted at /etc/hosts
	Resolv      string // host path bind-mounted at /etc/resolv.conf
	Mounts      []sandboxMount
	// Pipes is a host folder mounted read-only at /dev/pipes: heredocs
	// with a #! line, written there before the command runs.
	Pipes string
	// Init is the host path of a statically linked executable that
	// imports package sandboxinit, the container's pid 1; empty: the
	// runtime's own init, and the command executed beside it.
	Init string
	// IDs maps the user namespace's ids to the host's.
	IDs idMap
	// Limits are the cgroup limits; ignored when IDs.rootless, where no
	// cgroup can be made.
	Limits Limits
}

// sandboxMount is one RUN --mount, resolved.
type sandboxMount struct {
	Kind     string // "bind", "tmpfs" or "secret"
	Source   string // host path (bind; secret: the value's file on a tmpfs)
	Target   string // absolute path in the sandbox
	ReadOnly bool
	Data     []byte // secret content
	Mode     uint32 // secret file mode
	UID, GID uint32 // secret file owner
	Size     int64  // tmpfs size limit in bytes; 0 means the kernel default
	ID       string // secret id
}

// sandboxError is a sandbox that could not be set up, or a command that
// could not be started in it.
type sandboxError struct {
	msg      string
	notFound bool
}

func (e *sandboxError) Error() string { return e.msg }

// sandboxResult is how a RUN ended: its exit code, and whether the cgroup
// saw the memory or the process limit hit.
type sandboxResult struct {
	Exit      int
	OOMKilled bool
	PidsMax   bool
}

// SkipRunEnv, set to 1, lets the RUN tests skip on a machine without
// Debian's busybox-static, the base of their test images.
const SkipRunEnv = "FLEETWRIGHT_SKIP_RUN"

// Limits bound the resources of one RUN through its cgroup. Zero fields
// take the defaults (DefaultLimits).
type Limits struct {
	// Memory is the most memory, in bytes, the RUN's processes may use
	// together (swap included); more is an out-of-memory kill.
	Memory int64
	// Pids is the most processes and threads alive at once.
	Pids int64
	// CPUs is how many CPUs' worth of time the RUN may use (1.5: one and a
	// half); 0 means the default.
	CPUs float64
}

// DefaultLimits are the limits of a RUN that platform.yaml's
// build.limits does not change: 4 GiB of memory, 4096 processes, 2 CPUs.
func DefaultLimits() Limits { return Limits{Memory: 4 << 30, Pids: 4096, CPUs: 2} }

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Memory <= 0 {
		l.Memory = d.Memory
	}
	if l.Pids <= 0 {
		l.Pids = d.Pids
	}
	if l.CPUs <= 0 {
		l.CPUs = d.CPUs
	}
	return l
}

// memoryString shows a byte count in the largest binary unit that divides
// it.
func memoryString(n int64) string {
	for _, u := range []struct {
		s string
		n int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.n && n%u.n == 0 {
			return fmt.Sprintf("%d %s", n/u.n, u.s)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// idMap is how the user namespace of a RUN maps ids. As root, container
// ids 0…idRange-1 are host ids base…base+idRange-1, ids no host user has;
// without root the one id of the user running the builder is container
// root, and no other id exists.
type idMap struct {
	rootless bool
	base     uint32 // host id of container root; the user's uid without root
	gidBase  uint32 // the user's gid without root; base as root
}

// idRange is how many ids the user namespace maps as root.
const idRange = 65536

// rootIDBase is the host id of container root when the builder runs as
// root: high enough that no account of the build machine has it.
const rootIDBase = 1_000_000_000

// toHost turns a container uid (or gid) into the host's, as files
// unpacked for a RUN are owned.
func (m idMap) toHost(id int, gid bool) int {
	if m.rootless {
		if gid {
			return int(m.gidBase)
		}
		return int(m.base)
	}
	if id < 0 || id >= idRange {
		return id
	}
	return int(m.base) + id
}

// fromHost turns a host uid (or gid) found in a root filesystem back into
// the container's, as a layer records it.
func (m idMap) fromHost(id uint32, gid bool) uint32 {
	if m.rootless {
		if (!gid && id == m.base) || (gid && id == m.gidBase) {
			return 0
		}
		return id
	}
	if id >= m.base && id < m.base+idRange {
		return id - m.base
	}
	return id
}

// runtimeMissing is the error of a RUN when no OCI runtime is installed.
func runtimeMissing(tried []string) error {
	return fmt.Errorf("RUN needs an OCI runtime and none of %s is on PATH: install runc (Debian and Ubuntu: apt-get install runc; GitHub's hosted runners have it) or crun, or configure build.external in platform.yaml", strings.Join(tried, ", "))
}

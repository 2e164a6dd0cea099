package spec

// BuildLimits bound the resources of each RUN of a Dockerfile build, through
// its cgroup (when render runs as root; see docs/build.md).
type BuildLimits struct {
	// Memory is the most memory the RUN's processes use together, swap included, as a quantity such as 4Gi (default 4Gi); more is an out-of-memory kill that fails the build.
	Memory *Quantity `json:"memory,omitempty"`
	// Pids is the most processes and threads a RUN has at once (default 4096).
	Pids int64 `json:"pids,omitempty" jsonschema:"minimum=1"`
	// CPUs is how many CPUs' worth of time a RUN may use, such as 2 or 1500m (default 2).
	CPUs *Quantity `json:"cpus,omitempty"`
}

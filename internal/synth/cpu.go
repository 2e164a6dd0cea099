package synth

import (
	"syscall"
	"time"
)

// CPUTime returns the user and system CPU time this process has used, for
// benchmarks that report CPU seconds per operation next to wall time: on a
// shared machine the first is the steadier figure.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

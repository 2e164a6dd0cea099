//go:build unix && !linux

package cluster

import "syscall"

// sysProcAttr puts each process in a process group of its own, so Stop can
// end it with whatever it started. Only Linux can also have the kernel kill
// the processes when the test process dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

package cluster

import "syscall"

// sysProcAttr puts each process in a process group of its own, so Stop can
// end it with whatever it started, and has the kernel kill it when the test
// process dies without calling Stop (a timeout's panic, a kill -9). The
// parent-death signal follows the OS thread that started the child; the Go
// runtime never ends its threads unless a goroutine exits while locked to
// one, which nothing here does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

package main

import (
	"errors"
	"os/exec"
	"syscall"
)

// canCreateNamespaces reports why RUN's namespaces cannot be made here
// (a container without CAP_SYS_ADMIN, say), or nil.
func canCreateNamespaces() error {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET}
	if err := cmd.Run(); errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) {
		return err
	}
	return nil
}

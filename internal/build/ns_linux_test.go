package build

import (
	"errors"
	"os/exec"
	"sync"
	"syscall"
)

// namespacesOnce starts /bin/true in the namespaces RUN uses, once.
var namespacesOnce = sync.OnceValue(func() error {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET}
	err := cmd.Run()
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) {
		return err
	}
	return nil
})

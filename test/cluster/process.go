package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is one program of the cluster, running in a process group of its
// own, with its standard output and error in one log file.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has been waited for
	waitErr error         // valid after done is closed
}

// startProcess runs bin with args and exactly env (nothing is inherited),
// in dir, logging to <logDir>/<name>.log.
func startProcess(name, bin, dir, logDir string, args, env []string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("starting %s: %w", name, err), logFile.Close())
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close() // the child holds its own copy; nothing is lost
		close(p.done)
	}()
	return p, nil
}

// exited returns a non-nil error, with the tail of its log, once the process
// has ended: while the cluster runs, no process may end.
func (p *process) exited() error {
	select {
	case <-p.done:
		state := "exited"
		if p.waitErr != nil {
			state = p.waitErr.Error()
		}
		return fmt.Errorf("%s ended early (%s); last lines of %s:\n%s", p.name, state, p.logPath, p.tail(20))
	default:
		return nil
	}
}

// signal sends sig to the process's whole group. It is a no-op once the
// process has been waited for, so a reused pid is never hit.
func (p *process) signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// wait waits up to d for the process to end and reports whether it did.
func (p *process) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// maxTail bounds how much of a log tail reads.
const maxTail = 64 << 10

// tail returns up to the last n lines of the process's log.
func (p *process) tail(n int) string {
	return tailFile(p.logPath, n)
}

func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	off := max(fi.Size()-maxTail, 0)
	buf, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	buf = bytes.TrimRight(buf, "\n")
	lines := bytes.Split(buf, []byte("\n"))
	if off > 0 && len(lines) > 1 {
		lines = lines[1:] // the first line is cut
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

//go:build linux

package sandboxinit

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// statusFD is the pipe the exit code is written to.
const statusFD = 3

func init() {
	if os.Getpid() != 1 || len(os.Args) < 2 || os.Args[0] != Path {
		return
	}
	code := run(os.Args[1:])
	st := os.NewFile(statusFD, "status")
	st.WriteString(strconv.Itoa(code) + "\n")
	os.Exit(code)
}

// run starts argv and waits for it, reaping every other child meanwhile.
func run(argv []string) int {
	syscall.CloseOnExec(statusFD)
	file, err := lookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", argv[0], err)
		return 127
	}
	attr := &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}}
	pid, err := syscall.ForkExec(file, argv, attr)
	// A file of the root filesystem the builder has just written can still
	// be open for writing in a child another of its goroutines forked and
	// has not yet executed: wait for that to pass.
	for try := 0; err == syscall.ETXTBSY && try < 100; try++ {
		time.Sleep(20 * time.Millisecond)
		pid, err = syscall.ForkExec(file, argv, attr)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", argv[0], err)
		if err == syscall.ENOENT {
			return 127
		}
		return 126
	}
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "waiting for %s: %v\n", argv[0], err)
			return 255
		}
		if wpid != pid {
			continue
		}
		code := ws.ExitStatus()
		if ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		endAll()
		return code
	}
}

// endAll kills every other process of the container's pid namespace and
// reaps them, so that once the init has written the exit code nothing of
// the RUN runs any more.
func endAll() {
	syscall.Kill(-1, syscall.SIGKILL)
	for {
		_, err := syscall.Wait4(-1, nil, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return
		}
	}
}

// lookPath finds a command without a slash in $PATH as a shell does,
// relative entries from the working directory.
func lookPath(file string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	pathEnv, ok := os.LookupEnv("PATH")
	if !ok {
		pathEnv = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	for _, dir := range strings.Split(pathEnv, ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + file
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Mode&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("not found in $PATH (%s)", pathEnv)
}

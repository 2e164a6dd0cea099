// Package sandboxinit is the first process of a RUN's container: the
// builder's own executable (or LocalOptions.Init), mounted read-only at
// Path, runs the RUN's command as its child and reports how it ended.
//
// The command is not the container's init, so that it is treated as any
// other process: a signal it sends itself is not ignored (`kill -9 $$`
// kills it). The init waits for the command, reaping every other process
// that ends meanwhile, then kills and reaps whatever the command left
// running in the container, writes the command's exit code to file
// descriptor 3 (a pipe the builder reads; the command does not get it) and
// exits. So once the pipe is closed, nothing of the RUN runs any more.
//
// Import it from the builder (package build does): its init function takes
// over the process before the other packages are initialized when, and
// only when, the process is pid 1 started as Path.
package sandboxinit

// Path is where the builder mounts its executable in a RUN's container:
// on the container's own /dev tmpfs, so it is in no layer.
const Path = "/dev/.fleetwright-init"

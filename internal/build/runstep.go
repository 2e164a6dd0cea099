package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// SecretSource says where the value of a RUN --mount=type=secret comes
// from: an environment variable or a file. The value is read when a RUN
// needs it, mounted on a tmpfs, and never put in a layer, a cache key or
// any output.
type SecretSource struct {
	Env  string
	File string
}

// RunError is a RUN instruction whose command failed or was killed.
type RunError struct {
	File     string
	Line     int
	Command  string
	ExitCode int
	// Output is the last lines the command printed, with secret values
	// masked.
	Output string
	// Killed is set when the build timeout (or a cancellation) stopped the
	// command; Err then says which.
	Killed bool
	Err    error
	// Limit says which cgroup limit the command hit, when one did.
	Limit string
}

func (e *RunError) Unwrap() error { return e.Err }

// RunOutputLines is how many lines of a failed RUN's output are kept.
const RunOutputLines = 20

func (e *RunError) Error() string {
	var last string
	if lines := strings.Split(strings.TrimRight(e.Output, "\n"), "\n"); len(lines) > 0 && lines[len(lines)-1] != "" {
		last = ": " + lines[len(lines)-1]
	}
	if e.Killed && errors.Is(e.Err, context.DeadlineExceeded) {
		return fmt.Sprintf("%s:%d: RUN %s: killed at the build timeout", e.File, e.Line, e.Command)
	}
	if e.Killed {
		return fmt.Sprintf("%s:%d: RUN %s: killed: %v", e.File, e.Line, e.Command, e.Err)
	}
	if e.Limit != "" {
		return fmt.Sprintf("%s:%d: RUN %s: exit code %d: %s", e.File, e.Line, e.Command, e.ExitCode, e.Limit)
	}
	return fmt.Sprintf("%s:%d: RUN %s: exit code %d%s", e.File, e.Line, e.Command, e.ExitCode, last)
}

// BuildOutput returns the last lines of the command's output, for
// RunLevels to show.
func (e *RunError) BuildOutput() string { return e.Output }

// runArgv turns RUN's command line into argv, as BuildKit does: the exec
// form as written, the shell form through the stage's shell; a heredoc
// that starts with #! is run as a script from /dev/pipes, another heredoc
// as the shell's script.
func runArgv(c *instructions.RunCommand, shellCmd []string) ([]string, map[string]string, error) {
	args := slices.Clone(c.CmdLine)
	var scripts map[string]string
	if len(c.Files) > 0 {
		if len(args) != 1 || !c.PrependShell {
			return nil, nil, errors.New("a heredoc needs the shell form")
		}
		if hd := parser.MustParseHeredoc(args[0]); hd != nil {
			data := c.Files[0].Data
			if c.Files[0].Chomp {
				data = parser.ChompHeredocContent(data)
			}
			if strings.HasPrefix(data, "#!") {
				name := path.Base(c.Files[0].Name)
				scripts = map[string]string{name: data}
				return []string{"/dev/pipes/" + name}, scripts, nil
			}
			args = []string{data}
		} else {
			var b strings.Builder
			b.WriteString(args[0])
			for _, f := range c.Files {
				b.WriteString("\n" + f.Data + f.Name)
			}
			args = []string{b.String()}
		}
	}
	if !c.PrependShell {
		if len(args) == 0 {
			return nil, nil, errors.New("empty command")
		}
		return args, scripts, nil
	}
	sh := shellCmd
	if len(sh) == 0 {
		sh = []string{"/bin/sh", "-c"}
	}
	return append(slices.Clone(sh), strings.Join(args, " ")), scripts, nil
}

// runEnv is the command's environment: the image's ENV, then the stage's
// ARGs that ENV does not set, sorted, and PATH when neither sets it.
func runEnv(cfg v1.Config, args map[string]string) []string {
	env := slices.Clone(cfg.Env)
	has := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		has[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if !has[k] {
			env = append(env, k+"="+args[k])
			has[k] = true
		}
	}
	if !has["PATH"] {
		env = append(env, "PATH="+defaultPath)
	}
	return env
}

// runUser resolves USER as Docker does: a name or number, with an optional
// group; the primary group from /etc/passwd unless a group is given, and
// the supplementary groups /etc/group lists the user in.
func runUser(spec string, etc etcLookup) (uid, gid uint32, groups []uint32, err error) {
	if spec == "" {
		return 0, 0, nil, nil
	}
	user, group, hasGroup := strings.Cut(spec, ":")
	passwd, havePasswd, err := etc("/etc/passwd")
	if err != nil {
		return 0, 0, nil, err
	}
	name := ""
	if n, ok := parseID(user); ok {
		uid = uint32(n)
		eachRecord(passwd, func(f []string) bool {
			if len(f) >= 4 && f[2] == user {
				if g, ok := parseID(f[3]); ok {
					gid, name = uint32(g), f[0]
				}
				return false
			}
			return true
		})
	} else {
		if !havePasswd {
			return 0, 0, nil, fmt.Errorf("USER %s: the stage has no /etc/passwd to look the user up in", spec)
		}
		o, found := lookupPasswd(passwd, user)
		if !found {
			return 0, 0, nil, fmt.Errorf("USER %s: no user %q in /etc/passwd", spec, user)
		}
		uid, gid, name = uint32(o.uid), uint32(o.gid), user
	}
	groupData, haveGroup, err := etc("/etc/group")
	if err != nil {
		return 0, 0, nil, err
	}
	if hasGroup {
		if g, ok := parseID(group); ok {
			return uid, uint32(g), nil, nil
		}
		if !haveGroup {
			return 0, 0, nil, fmt.Errorf("USER %s: the stage has no /etc/group to look the group up in", spec)
		}
		g, found := lookupGroup(groupData, group)
		if !found {
			return 0, 0, nil, fmt.Errorf("USER %s: no group %q in /etc/group", spec, group)
		}
		return uid, uint32(g), nil, nil
	}
	if name != "" {
		eachRecord(groupData, func(f []string) bool {
			if len(f) >= 4 && slices.Contains(strings.Split(f[3], ","), name) {
				if g, ok := parseID(f[2]); ok && uint32(g) != gid {
					groups = append(groups, uint32(g))
				}
			}
			return true
		})
	}
	return uid, gid, groups, nil
}

// runInstr executes a RUN instruction and adds its layer to the stage: from
// the layer cache when a build with the same parent layers, command,
// environment and mount sources made one, else by running it.
func (x *executor) runInstr(ctx context.Context, df *dockerfile, p *plan, st *stageState, c *instructions.RunCommand, done map[int]*stageState) error {
	r := &runStep{x: x, df: df, st: st, c: c, line: lineOf(c)}
	cfg := st.cfg.Config
	if x.l.noRun {
		return &UnsupportedError{File: df.file, Line: r.line, Instruction: "RUN", Reason: "is left to the external builder"}
	}
	if err := x.l.canRun(st.plan.platform); err != nil {
		return r.fail("%w", err)
	}
	argv, scripts, err := runArgv(c, cfg.Shell)
	if err != nil {
		return r.fail("%w", err)
	}
	r.scripts = scripts
	hostNet, err := x.hostNetwork(c)
	if err != nil {
		return r.fail("%w", err)
	}
	if sec := instructions.GetSecurity(c); sec != "" && sec != "sandbox" {
		return r.fail("--security=%s is not supported by the built-in builder", sec)
	}
	wd := cfg.WorkingDir
	if wd == "" {
		wd = "/"
	}
	r.spec = sandboxSpec{
		Args: argv, Env: runEnv(cfg, st.args), Dir: wd, Hostname: "fleetwright",
		HostNetwork: hostNet, IDs: x.l.ids, Limits: x.l.limits, Init: x.l.sandboxInit(),
	}
	mounts, key, err := x.resolveMounts(ctx, df, p, st, c, done)
	if err != nil {
		return r.fail("%w", err)
	}
	defer mounts.release()
	r.mounts = mounts
	r.spec.Env = append(r.spec.Env, mounts.env...)
	cacheKey, err := r.cacheKey(wd, key)
	if err != nil {
		return r.fail("%w", err)
	}
	code := commandText(c)
	if l, ok := x.cache.lookup(cacheKey); ok {
		r.step(" (from the layer cache)")
		x.l.log.Debug("RUN cache hit", "build", x.req.Name, "line", r.line)
		x.addRunLayer(st, l, code)
		x.cache.use(cacheKey, l)
		return nil
	}
	rt, stubs, before, err := r.prepare()
	if err != nil {
		return err
	}
	if err := r.run(ctx, rt, stubs); err != nil {
		return err
	}
	layer, err := r.layer(before)
	if err != nil {
		return err
	}
	x.addRunLayer(st, layer, code)
	r.rfs.applied = len(st.fs.layers)
	x.cache.add(cacheKey, layer)
	return nil
}

// hostNetwork reports whether RUN c runs in the host's network, by its
// --network and platform.yaml's build.network, or why it may not run.
func (x *executor) hostNetwork(c *instructions.RunCommand) (bool, error) {
	switch network := instructions.GetNetwork(c); network {
	case "", "default":
		return x.l.network == "host", nil
	case "none":
		return false, nil
	case "host":
		if x.l.network != "host" {
			return false, errors.New("--network=host is not allowed; platform.yaml's build.network must be host")
		}
		return true, nil
	default:
		return false, fmt.Errorf("--network=%s: want none, default or host", network)
	}
}

// runStep is one RUN instruction on its way to a layer: runInstr fills it
// as it learns what runs and how.
type runStep struct {
	x       *executor
	df      *dockerfile
	st      *stageState
	c       *instructions.RunCommand
	line    int
	spec    sandboxSpec
	scripts map[string]string // by name: the heredoc scripts of the command
	mounts  *mountSet
	rfs     *rootFS // the stage's tree, once the RUN is not from the cache
}

// fail is an error at the RUN's line.
func (r *runStep) fail(format string, a ...any) error {
	return r.df.errorf(r.line, "RUN: "+format, a...)
}

// step writes the progress line of the RUN, with note after it.
func (r *runStep) step(note string) {
	x := r.x
	if x.l.output != nil {
		prefix := ""
		if x.req.Name != "" {
			prefix = x.req.Name + ": "
		}
		fmt.Fprintf(x.l.output, "%s%s:%d: RUN %s%s\n", prefix, r.df.file, r.line, redact(runSummary(r.c), r.mounts.secrets), note)
	}
}

// cacheKey is the key of the RUN's layer in the layer cache: the layers
// below, what runs and how (in working directory wd), and the mounts'
// sources, mountKey (never a secret's value).
func (r *runStep) cacheKey(wd, mountKey string) (string, error) {
	cfg := r.st.cfg.Config
	h := sha256.New()
	fmt.Fprintf(h, "fleetwright-run-v1\nplatform %s\nuser %q\nworkdir %q\nnetwork %v\n", platformString(r.st.plan.platform), cfg.User, wd, r.spec.HostNetwork)
	for _, l := range r.st.fs.layers {
		d, err := layerDiffID(l)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "layer %s\n", d)
	}
	for _, a := range r.spec.Args {
		fmt.Fprintf(h, "arg %q\n", a)
	}
	for _, e := range runEnv(cfg, r.st.args) {
		fmt.Fprintf(h, "env %q\n", e)
	}
	for _, n := range slices.Sorted(maps.Keys(r.scripts)) {
		fmt.Fprintf(h, "script %q %q\n", n, r.scripts[n])
	}
	h.Write([]byte(mountKey))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// prepare makes the stage's tree ready for the RUN: unpacked, its user
// known, its secrets in files, the stubs of the sandbox in place and the
// command checked. It returns the runtime's path, the stubs to remove
// after the run and the tree as it was before them.
func (r *runStep) prepare() (string, []stub, map[string]snapEntry, error) {
	x, cfg := r.x, r.st.cfg.Config
	rfs, err := x.rootfsFor(r.st)
	if err != nil {
		return "", nil, nil, r.fail("unpacking the stage: %w", err)
	}
	r.rfs = rfs
	spec := &r.spec
	if spec.UID, spec.GID, spec.Groups, err = runUser(cfg.User, rfs.readFile); err != nil {
		return "", nil, nil, r.fail("%w", err)
	}
	if x.l.rootless && (spec.UID != 0 || spec.GID != 0) {
		return "", nil, nil, r.fail("USER %s needs the builder to run as root: without root, RUN runs in a user namespace that maps only uid 0", cfg.User)
	}
	rt, err := x.l.runtimePath()
	if err != nil {
		return "", nil, nil, r.fail("%w", err)
	}
	for i := range r.mounts.list {
		m := &r.mounts.list[i].sandboxMount
		if m.Kind == "secret" {
			if m.Mode == 0 {
				m.Mode = 0o400
			}
			if m.Source, err = x.secretFile(*m); err != nil {
				return "", nil, nil, r.fail("secret %q: %w", m.ID, err)
			}
		}
		spec.Mounts = append(spec.Mounts, *m)
	}
	before, err := snapshot(rfs.dir, rfs.ids)
	if err != nil {
		return "", nil, nil, r.fail("%w", err)
	}
	stubs, err := x.prepareSandbox(rfs, spec, r.scripts)
	if err != nil {
		removeStubs(rfs, stubs)
		return "", nil, nil, r.fail("%w", err)
	}
	if len(r.mounts.env) > 0 {
		// The bundle holds the command's environment, secrets included:
		// keep it off the disk too.
		if err := x.ensureSecretDir(); err != nil {
			removeStubs(rfs, stubs)
			return "", nil, nil, r.fail("%w", err)
		}
		spec.Bundle = filepath.Join(x.secretDir, filepath.Base(spec.Bundle))
	}
	spec.Rootfs = rfs.dir
	if err := rfs.checkCommand(spec); err != nil {
		removeStubs(rfs, stubs)
		var se *sandboxError
		if errors.As(err, &se) && se.notFound {
			return "", nil, nil, &RunError{File: r.df.file, Line: r.line, Command: runSummary(r.c), ExitCode: 127, Output: redact(se.msg, r.mounts.secrets)}
		}
		return "", nil, nil, r.fail("%w", err)
	}
	return rt, stubs, before, nil
}

// run runs the command in the sandbox with the runtime rt, its output
// redacted, then removes the secrets' files and the stubs. A command that
// did not end well is a RunError with the last lines of its output.
func (r *runStep) run(ctx context.Context, rt string, stubs []stub) error {
	x := r.x
	tail := &lineTail{max: RunOutputLines}
	var out io.Writer = tail
	if x.l.output != nil {
		out = io.MultiWriter(tail, x.l.output)
	}
	red := &redactor{w: out, secrets: r.mounts.secrets}
	x.l.noLimitsNote()
	r.step("")
	x.l.log.Debug("RUN", "build", x.req.Name, "line", r.line)
	res, runErr := runSandbox(ctx, rt, x.stateDir(), r.spec, red, &x.bg)
	red.flush()
	r.mounts.removeSecretFiles()
	if err := removeStubs(r.rfs, stubs); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return &RunError{File: r.df.file, Line: r.line, Command: runSummary(r.c), Killed: true, Err: ctx.Err(), Output: tail.String()}
		}
		return r.fail("%w", runErr)
	}
	if res.Exit != 0 {
		re := &RunError{File: r.df.file, Line: r.line, Command: runSummary(r.c), ExitCode: res.Exit, Output: tail.String()}
		switch {
		case res.OOMKilled:
			re.Limit = fmt.Sprintf("out of memory: the memory limit of %s was reached (platform.yaml build.limits.memory)", memoryString(r.spec.Limits.Memory))
		case res.PidsMax:
			re.Limit = fmt.Sprintf("the process limit of %d was reached (platform.yaml build.limits.pids)", r.spec.Limits.Pids)
		}
		return re
	}
	return nil
}

// layer writes the layer of what the RUN changed in the stage's tree
// since before, and brings the tree's known checksums up to date. A
// secret's value found in it is a SecretLeakError.
func (r *runStep) layer(before map[string]snapEntry) (*fileLayer, error) {
	x, rfs := r.x, r.rfs
	after, err := snapshot(rfs.dir, rfs.ids)
	if err != nil {
		return nil, r.fail("%w", err)
	}
	entries, err := diffTrees(before, after, rfs.sums, rfs.sumFile)
	if err != nil {
		return nil, r.fail("%w", err)
	}
	x.layerSeq++
	scan := newLeakScanner(r.mounts.secretIDs, r.mounts.secrets)
	layer, sums, err := rfs.writeDiff(entries, x.epoch, r.st.layerType, filepath.Join(x.workDir, fmt.Sprintf("layer-%d.tar.gz", x.layerSeq)), scan)
	var leak *leakError
	if errors.As(err, &leak) {
		return nil, &SecretLeakError{File: r.df.file, Line: r.line, Command: runSummary(r.c), Secret: leak.id, Path: leak.path}
	}
	if err != nil {
		return nil, r.fail("writing the layer: %w", err)
	}
	for _, e := range entries {
		if e.kind == diffWhiteout || (e.kind == diffAdd && !e.st.mode.IsRegular()) {
			delete(rfs.sums, e.path)
			prefix := e.path + "/"
			for k := range rfs.sums {
				if strings.HasPrefix(k, prefix) {
					delete(rfs.sums, k)
				}
			}
		}
	}
	maps.Copy(rfs.sums, sums)
	return layer, nil
}

// runSummary is RUN's command as messages show it: its first line, cut.
func runSummary(c *instructions.RunCommand) string {
	s := strings.Join(c.CmdLine, " ")
	if !c.PrependShell {
		s = "[" + strings.Join(c.CmdLine, " ") + "]"
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "…"
	}
	return s
}

func (x *executor) addRunLayer(st *stageState, l v1.Layer, code string) {
	st.adds = append(st.adds, mutate.Addendum{
		Layer:   l,
		History: v1.History{Created: v1.Time{Time: x.epoch}, CreatedBy: code},
	})
	st.fs.layers = append(st.fs.layers, fsLayer{remote: l})
	st.fs.idx = nil
	st.known = nil
}

func layerDiffID(l fsLayer) (v1.Hash, error) {
	if l.remote != nil {
		return l.remote.DiffID()
	}
	raw, err := writeTar(slices.Collect(maps.Values(l.own)), time.Unix(0, 0).UTC())
	if err != nil {
		return v1.Hash{}, err
	}
	return sha256Hash(raw), nil
}

// rootfsFor returns the stage's unpacked filesystem, unpacking the layers
// added since it was last brought up to date.
func (x *executor) rootfsFor(st *stageState) (*rootFS, error) {
	if err := x.ensureWorkDir(); err != nil {
		return nil, err
	}
	if st.rootfs == nil {
		x.layerSeq++
		r, err := newRootFS(filepath.Join(x.workDir, fmt.Sprintf("rootfs-%d", x.layerSeq)), x.l.ids, x.epoch)
		if err != nil {
			return nil, err
		}
		st.rootfs = r
		x.rootfses = append(x.rootfses, r)
	}
	return st.rootfs, st.rootfs.bringUp(st.fs)
}

// bringUp unpacks the layers of sfs that the directory lacks.
func (r *rootFS) bringUp(sfs *stageFS) error {
	for ; r.applied < len(sfs.layers); r.applied++ {
		l := sfs.layers[r.applied]
		var rd io.ReadCloser
		if l.remote != nil {
			var err error
			if rd, err = l.remote.Uncompressed(); err != nil {
				return err
			}
		} else {
			raw, err := writeTar(slices.Collect(maps.Values(l.own)), r.epoch)
			if err != nil {
				return err
			}
			rd = io.NopCloser(bytes.NewReader(raw))
		}
		err := r.extract(rd)
		rd.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (x *executor) ensureWorkDir() error {
	if x.workDir != "" {
		return nil
	}
	d, err := x.l.makeWorkDir("fleetwright-build-")
	if err != nil {
		return err
	}
	x.workDir = d
	return nil
}

// stateDir is the OCI runtime's state folder of the build.
func (x *executor) stateDir() string { return filepath.Join(x.workDir, "runtime") }

// cleanup removes the build's work directory: unpacked root filesystems,
// layer files, copies made for bind mounts.
func (x *executor) cleanup() {
	x.bg.Wait() // containers being deleted
	for _, r := range x.rootfses {
		r.close()
	}
	if x.secretDir != "" {
		os.RemoveAll(x.secretDir)
	}
	if x.workDir != "" {
		os.RemoveAll(x.workDir)
	}
}

// stub is a mount point the builder made in a root filesystem and removes
// after the RUN, so the layer does not carry it.
type stub struct {
	name string
	dir  bool
}

// prepareSandbox writes /etc/hosts and /etc/resolv.conf for the sandbox
// and makes the mount points its mounts need.
func (x *executor) prepareSandbox(r *rootFS, spec *sandboxSpec, scripts map[string]string) ([]stub, error) {
	var stubs []stub
	for _, d := range []string{"/proc", "/dev", "/sys"} {
		if err := r.ensureMountPoint(d, true, &stubs); err != nil {
			return stubs, fmt.Errorf("mount point %s: %w", d, err)
		}
	}
	if err := x.writeSandboxFiles(spec, scripts); err != nil {
		return stubs, err
	}
	for _, f := range []string{"/etc/hosts", "/etc/resolv.conf"} {
		if fi, err := r.root.Lstat(relName(f)); err == nil && !fi.Mode().IsRegular() {
			// A link or directory there: leave the image's as it is.
			if f == "/etc/hosts" {
				spec.Hosts = ""
			} else {
				spec.Resolv = ""
			}
			continue
		}
		if err := r.ensureMountPoint(f, false, &stubs); err != nil {
			return stubs, fmt.Errorf("mount point %s: %w", f, err)
		}
	}
	for i, m := range spec.Mounts {
		dir := m.Kind == "tmpfs"
		if m.Kind == "bind" {
			fi, err := os.Stat(m.Source)
			dir = err != nil || fi.IsDir()
		}
		if err := r.ensureMountPoint(m.Target, dir, &stubs); err != nil {
			return stubs, fmt.Errorf("mount point %s: %w", m.Target, err)
		}
		// The kernel resolves the target on the host side: give it the path
		// the links inside the root filesystem lead to.
		real, err := r.resolve(m.Target, true)
		if err != nil {
			return stubs, fmt.Errorf("mount point %s: %w", m.Target, err)
		}
		spec.Mounts[i].Target = real
	}
	return stubs, nil
}

// ensureMountPoint makes the mount point p (a folder if dir, else an
// empty file) in the root filesystem, with the folders missing above it,
// owned by the sandbox's root, and adds what it made to stubs. p is
// resolved inside the root filesystem first.
func (r *rootFS) ensureMountPoint(p string, dir bool, stubs *[]stub) error {
	p, err := r.resolve(p, true)
	if err != nil {
		return err
	}
	var missing []string
	for q := p; q != "/"; q = path.Dir(q) {
		if _, err := r.root.Lstat(relName(q)); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, q)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		q := missing[i]
		if i > 0 || dir {
			if err := r.root.Mkdir(relName(q), 0o755); err != nil {
				return err
			}
			*stubs = append(*stubs, stub{q, true})
			if err := r.chownRoot(q); err != nil {
				return err
			}
			continue
		}
		f, err := r.root.OpenFile(relName(q), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		f.Close()
		*stubs = append(*stubs, stub{q, false})
		if err := r.chownRoot(q); err != nil {
			return err
		}
	}
	return nil
}

// writeSandboxFiles names the RUN's bundle and writes, beside it, what the
// sandbox mounts from the host: the heredoc scripts (in spec.Pipes),
// /etc/hosts and /etc/resolv.conf (the host's with the host's network,
// else empty).
func (x *executor) writeSandboxFiles(spec *sandboxSpec, scripts map[string]string) error {
	hosts := "127.0.0.1\tlocalhost fleetwright\n::1\tlocalhost ip6-localhost ip6-loopback\n"
	resolv := ""
	if spec.HostNetwork {
		if b, err := os.ReadFile("/etc/resolv.conf"); err == nil {
			resolv = string(b)
		}
	}
	x.layerSeq++
	spec.Bundle = filepath.Join(x.workDir, fmt.Sprintf("bundle-%d", x.layerSeq))
	if len(scripts) > 0 {
		spec.Pipes = filepath.Join(x.workDir, fmt.Sprintf("pipes-%d", x.layerSeq))
		if err := os.Mkdir(spec.Pipes, 0o755); err != nil {
			return err
		}
		for name, data := range scripts {
			if err := os.WriteFile(filepath.Join(spec.Pipes, name), []byte(data), 0o755); err != nil {
				return err
			}
		}
	}
	spec.Hosts = filepath.Join(x.workDir, fmt.Sprintf("hosts-%d", x.layerSeq))
	spec.Resolv = filepath.Join(x.workDir, fmt.Sprintf("resolv-%d", x.layerSeq))
	if err := os.WriteFile(spec.Hosts, []byte(hosts), 0o644); err != nil {
		return err
	}
	return os.WriteFile(spec.Resolv, []byte(resolv), 0o644)
}

// removeStubs removes the mount points prepareSandbox made, deepest first,
// leaving any that the command put something in.
func removeStubs(r *rootFS, stubs []stub) error {
	for i := len(stubs) - 1; i >= 0; i-- {
		s := stubs[i]
		fi, err := r.root.Lstat(relName(s.name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if s.dir != fi.IsDir() || (!s.dir && fi.Size() > 0) {
			continue
		}
		if err := r.root.Remove(relName(s.name)); err != nil && s.dir && !isNotEmpty(err) {
			return err
		}
	}
	return nil
}

func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}

// maxTailLine is the length a line of a failed RUN's output is cut to.
const maxTailLine = 1000

// lineTail keeps the last max lines written to it, each cut to
// maxTailLine bytes.
type lineTail struct {
	mu      sync.Mutex
	max     int
	lines   []string
	partial []byte
}

func (t *lineTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		line := t.partial[:i]
		if len(line) > maxTailLine {
			line = append(line[:maxTailLine:maxTailLine], "…"...)
		}
		t.lines = append(t.lines, string(line))
		t.partial = t.partial[i+1:]
		if len(t.lines) > t.max {
			t.lines = t.lines[len(t.lines)-t.max:]
		}
	}
	if len(t.partial) > 4*maxTailLine {
		t.partial = t.partial[len(t.partial)-4*maxTailLine:]
	}
	return len(p), nil
}

func (t *lineTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := slices.Clone(t.lines)
	if len(t.partial) > 0 {
		lines = append(lines, string(t.partial))
	}
	if len(lines) > t.max {
		lines = lines[len(lines)-t.max:]
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// redactor masks secret values in what passes through it, a line at a
// time, so a value split across writes is masked too.
type redactor struct {
	w       io.Writer
	secrets [][]byte
	buf     []byte
}

const secretMask = "[secret]"

func (r *redactor) Write(p []byte) (int, error) {
	if len(r.secrets) == 0 {
		return r.w.Write(p)
	}
	r.buf = append(r.buf, p...)
	i := bytes.LastIndexByte(r.buf, '\n')
	if i < 0 && len(r.buf) < 64<<10 {
		return len(p), nil
	}
	if i < 0 {
		i = len(r.buf) - 1
	}
	chunk := r.buf[:i+1]
	if _, err := r.w.Write(redactBytes(chunk, r.secrets)); err != nil {
		return 0, err
	}
	r.buf = append([]byte(nil), r.buf[i+1:]...)
	return len(p), nil
}

func (r *redactor) flush() {
	if len(r.buf) > 0 {
		r.w.Write(redactBytes(r.buf, r.secrets))
		r.buf = nil
	}
}

func redactBytes(b []byte, secrets [][]byte) []byte {
	for _, s := range secrets {
		for _, v := range allSecretForms(s) {
			b = bytes.ReplaceAll(b, v, []byte(secretMask))
		}
	}
	return b
}

func redact(s string, secrets [][]byte) string { return string(redactBytes([]byte(s), secrets)) }

// secretForms are the byte strings masked for a secret: the value, and
// without a trailing newline, and each of its lines of 4 bytes or more.
func secretForms(s []byte) [][]byte {
	var out [][]byte
	if len(s) > 0 {
		out = append(out, s)
	}
	if t := bytes.TrimRight(s, "\r\n"); len(t) > 0 && len(t) != len(s) {
		out = append(out, t)
	}
	for _, l := range bytes.Split(s, []byte("\n")) {
		if l = bytes.TrimRight(l, "\r"); len(l) >= 4 && len(l) != len(s) {
			out = append(out, l)
		}
	}
	return out
}

// mountSet is the resolved mounts of one RUN and what to release after.
type mountSet struct {
	list      []resolvedMount
	env       []string // secrets mounted as environment variables
	secrets   [][]byte
	secretIDs []string // the ids of secrets, by index
	unlock    []func()
}

// removeSecretFiles removes the files secrets were mounted from.
func (m *mountSet) removeSecretFiles() {
	for _, rm := range m.list {
		if rm.Kind == "secret" && rm.Source != "" {
			os.Remove(rm.Source)
		}
	}
}

type resolvedMount struct{ sandboxMount }

func (m *mountSet) release() {
	for _, u := range m.unlock {
		u()
	}
}

// resolveMounts turns RUN --mount flags into sandbox mounts and returns
// the part of the cache key they make: each mount's kind, target and
// source, never a secret's value.
func (x *executor) resolveMounts(ctx context.Context, df *dockerfile, p *plan, st *stageState, c *instructions.RunCommand, done map[int]*stageState) (*mountSet, string, error) {
	ms := &mountSet{}
	var key strings.Builder
	wd := st.cfg.Config.WorkingDir
	if wd == "" {
		wd = "/"
	}
	abs := func(t string) string {
		if !path.IsAbs(t) {
			t = path.Join(wd, t)
		}
		return path.Clean(t)
	}
	for _, m := range instructions.GetMounts(c) {
		switch m.Type {
		case instructions.MountTypeCache:
			if err := x.addCacheMount(ms, &key, m, abs); err != nil {
				return ms, "", err
			}
		case instructions.MountTypeTmpfs:
			if m.Target == "" {
				return ms, "", errors.New("--mount=type=tmpfs needs a target")
			}
			target := abs(m.Target)
			ms.list = append(ms.list, resolvedMount{sandboxMount: sandboxMount{Kind: "tmpfs", Target: target, Size: m.SizeLimit}})
			fmt.Fprintf(&key, "mount tmpfs %q %d\n", target, m.SizeLimit)
		case instructions.MountTypeSecret:
			if err := x.addSecretMount(ms, &key, m, abs); err != nil {
				return ms, "", err
			}
		case instructions.MountTypeBind:
			if m.Target == "" {
				return ms, "", errors.New("--mount=type=bind needs a target")
			}
			target := abs(m.Target)
			src, inputs, err := x.bindSource(ctx, df, p, st, m, lineOf(c), done)
			if err != nil {
				return ms, "", err
			}
			ms.list = append(ms.list, resolvedMount{sandboxMount: sandboxMount{Kind: "bind", Source: src, Target: target, ReadOnly: m.ReadOnly}})
			fmt.Fprintf(&key, "mount bind %q %q %v %s\n", target, m.Source, m.ReadOnly, inputs)
		case instructions.MountTypeSSH:
			return ms, "", errors.New("--mount=type=ssh is not supported by the built-in builder")
		default:
			return ms, "", fmt.Errorf("--mount=type=%s is not supported", m.Type)
		}
	}
	return ms, key.String(), nil
}

// addCacheMount adds the cache mount m to ms, and its part of the cache
// key to key: the cache's id and target, never what it holds. abs makes
// a target absolute in the working directory.
func (x *executor) addCacheMount(ms *mountSet, key *strings.Builder, m *instructions.Mount, abs func(string) string) error {
	if m.Target == "" {
		return errors.New("--mount=type=cache needs a target")
	}
	if m.From != "" {
		return errors.New("--mount=type=cache,from=… is not supported by the built-in builder")
	}
	target := abs(m.Target)
	id := m.CacheID
	if id == "" {
		id = target
	}
	dir, unlock, err := x.l.cacheDir(id, m)
	if err != nil {
		return err
	}
	if unlock != nil {
		ms.unlock = append(ms.unlock, unlock)
	}
	ms.list = append(ms.list, resolvedMount{sandboxMount: sandboxMount{Kind: "bind", Source: dir, Target: target, ReadOnly: m.ReadOnly}})
	fmt.Fprintf(key, "mount cache %q %q %v\n", id, target, m.ReadOnly)
	return nil
}

// addSecretMount adds the secret mount m to ms, as a file, an environment
// variable or both, and its part of the cache key to key (never the
// secret's value). A secret the project may not use is refused; one not
// configured is left out, or an error if the mount requires it.
func (x *executor) addSecretMount(ms *mountSet, key *strings.Builder, m *instructions.Mount, abs func(string) string) error {
	id := m.CacheID
	if id == "" && m.Target != "" {
		id = path.Base(m.Target)
	}
	if id == "" {
		return errors.New("--mount=type=secret needs an id")
	}
	if allowed, ok := x.l.secretProjects[id]; ok && !slices.Contains(allowed, x.req.Project) {
		return secretRefused(id, x.req.Project, allowed)
	}
	val, ok, err := x.l.secret(id)
	if err != nil {
		return err
	}
	fmt.Fprintf(key, "mount secret %q %q %v\n", id, m.Target, m.Env != nil)
	if !ok {
		if m.Required {
			return fmt.Errorf("secret %q is required but not configured (platform.yaml build.secrets, or --build-secret)", id)
		}
		return nil
	}
	ms.secrets = append(ms.secrets, val)
	ms.secretIDs = append(ms.secretIDs, id)
	if m.Env != nil {
		name := *m.Env
		if name == "" {
			name = id
		}
		ms.env = append(ms.env, name+"="+string(val))
	}
	if m.Target == "" && m.Env != nil {
		return nil // only in the environment
	}
	target := m.Target
	if target == "" {
		target = "/run/secrets/" + id
	}
	rm := resolvedMount{sandboxMount: sandboxMount{Kind: "secret", Target: abs(target), Data: val, ID: id}}
	if m.Mode != nil {
		rm.Mode = uint32(*m.Mode)
	}
	if m.UID != nil {
		rm.UID = uint32(*m.UID)
	}
	if m.GID != nil {
		rm.GID = uint32(*m.GID)
	}
	ms.list = append(ms.list, rm)
	return nil
}

// bindSource makes the directory (or file) a bind mount shows: a fresh
// copy, so that what the command writes there is dropped. It returns it
// with a digest of what it holds.
func (x *executor) bindSource(ctx context.Context, df *dockerfile, p *plan, st *stageState, m *instructions.Mount, line int, done map[int]*stageState) (string, string, error) {
	if err := x.ensureWorkDir(); err != nil {
		return "", "", err
	}
	x.layerSeq++
	dir := filepath.Join(x.workDir, fmt.Sprintf("bind-%d", x.layerSeq))
	r, err := newRootFS(dir, x.l.ids, x.epoch)
	if err != nil {
		return "", "", err
	}
	x.rootfses = append(x.rootfses, r)
	if m.From == "" {
		return x.bindContext(r, m)
	}
	return x.bindFrom(ctx, df, p, st, r, m, line, done)
}

// bindContext copies into r, at its root, what the bind mount m shows of
// the build context, as COPY sees it, and returns the path to mount with
// a digest of the files' names, modes, links and contents.
func (x *executor) bindContext(r *rootFS, m *instructions.Mount) (string, string, error) {
	dir := r.dir
	src := cleanAbs(m.Source)
	h := sha256.New()
	rel := relName(src)
	if rel == "." {
		rel = ""
	}
	f, err := x.bc.mountSource(rel)
	if err != nil {
		return "", "", fmt.Errorf("--mount=type=bind,source=%s: %w", m.Source, err)
	}
	rel = f.rel
	if rel == "." {
		rel = ""
	}
	files := []ctxFile{f}
	prefix := ""
	if f.mode.IsDir() {
		files = x.bc.below(rel)
		if rel != "" {
			prefix = rel + "/"
		}
	}
	for _, cf := range files {
		name := "/" + strings.TrimPrefix(cf.rel, prefix)
		if !f.mode.IsDir() {
			name = "/" + path.Base(cf.rel)
		}
		fmt.Fprintf(h, "%s %o %s\n", name, uint32(cf.mode), cf.link)
		switch {
		case cf.mode.IsDir():
			err = r.root.MkdirAll(relName(name), 0o755)
		case cf.mode&fs.ModeSymlink != 0:
			if err = r.root.MkdirAll(relName(path.Dir(name)), 0o755); err == nil {
				err = r.root.Symlink(cf.link, relName(name))
			}
		case cf.mode.IsRegular():
			var data []byte
			if data, err = x.readFile(cf.rel); err == nil {
				h.Write(data)
				if err = r.root.MkdirAll(relName(path.Dir(name)), 0o755); err == nil {
					err = r.root.WriteFile(relName(name), data, cf.mode.Perm())
				}
			}
		}
		if err == nil {
			err = r.chownRoot(name)
		}
		if err != nil {
			return "", "", fmt.Errorf("--mount=type=bind,source=%s: %w", m.Source, err)
		}
	}
	if !f.mode.IsDir() {
		return filepath.Join(dir, path.Base(f.rel)), "context " + hex.EncodeToString(h.Sum(nil)), nil
	}
	return dir, "context " + hex.EncodeToString(h.Sum(nil)), nil
}

// bindFrom brings up in r the stage or image the bind mount m names in
// from=, and returns the path to mount, with a digest of the layers below
// and the source.
func (x *executor) bindFrom(ctx context.Context, df *dockerfile, p *plan, st *stageState, r *rootFS, m *instructions.Mount, line int, done map[int]*stageState) (string, string, error) {
	dir := r.dir
	src := cleanAbs(m.Source)
	h := sha256.New()
	lex := shell.NewLex(df.escape)
	from, _, err := lex.ProcessWord(m.From, env{args: p.meta})
	if err != nil {
		return "", "", fmt.Errorf("--mount from=%s: %w", m.From, err)
	}
	var sfs *stageFS
	if j, ok := df.stageByName(from, st.plan.index); ok {
		s, ok := done[j]
		if !ok {
			return "", "", fmt.Errorf("--mount from=%s: stage not built", from)
		}
		sfs = s.fs
	} else if sfs, err = x.fromFS(ctx, df, p, st, copySpec{from: m.From, line: line}, done); err != nil {
		return "", "", err
	}
	for _, l := range sfs.layers {
		d, err := layerDiffID(l)
		if err != nil {
			return "", "", err
		}
		fmt.Fprintf(h, "%s\n", d)
	}
	if err := r.bringUp(sfs); err != nil {
		return "", "", fmt.Errorf("--mount from=%s: %w", from, err)
	}
	if src, err = r.resolve(src, true); err != nil {
		return "", "", fmt.Errorf("--mount from=%s,source=%s: %w", from, m.Source, err)
	}
	full := filepath.Join(dir, filepath.FromSlash(relName(src)))
	if _, err := r.root.Lstat(relName(src)); err != nil {
		return "", "", fmt.Errorf("--mount from=%s,source=%s: %w", from, m.Source, fs.ErrNotExist)
	}
	return full, "from " + hex.EncodeToString(h.Sum(nil)) + " " + strconv.Quote(src), nil
}

// ParseSecretFlag parses a --build-secret value: id=<id>,env=<variable>
// or id=<id>,src=<file> (file= works too). The value itself is never on
// the command line.
func ParseSecretFlag(s string) (string, SecretSource, error) {
	var id string
	var src SecretSource
	for _, field := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(field, "=")
		if !ok || v == "" {
			return "", src, fmt.Errorf("--build-secret %q: want id=<id>,env=<variable> or id=<id>,src=<file>", s)
		}
		switch k {
		case "id":
			id = v
		case "env":
			src.Env = v
		case "src", "source", "file":
			src.File = v
		default:
			return "", src, fmt.Errorf("--build-secret %q: unknown key %q (want id, env or src)", s, k)
		}
	}
	if id == "" || (src.Env == "") == (src.File == "") {
		return "", src, fmt.Errorf("--build-secret %q: want id=<id> and one of env=<variable> or src=<file>", s)
	}
	return id, src, nil
}

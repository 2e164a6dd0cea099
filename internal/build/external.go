package build

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fleetwright/fleetwright/internal/registry"
)

// Command is a process for a Runner.
type Command struct {
	Args []string
	// Env is the whole environment; nil inherits the current process's.
	Env []string
	// ExtraEnv is added to Env (or to the inherited environment).
	ExtraEnv []string
	Dir      string
	Stdout   io.Writer
	Stderr   io.Writer
}

// Runner runs commands.
type Runner interface {
	Run(ctx context.Context, cmd Command) error
}

// ExecRunner runs commands as child processes.
type ExecRunner struct{}

// Run implements Runner. The process is killed when ctx ends.
func (ExecRunner) Run(ctx context.Context, c Command) error {
	if len(c.Args) == 0 {
		return errors.New("empty command")
	}
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	cmd.Env = c.Env
	if len(c.ExtraEnv) > 0 {
		cmd.Env = append(cmd.Environ(), c.ExtraEnv...)
	}
	cmd.Dir = c.Dir
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	cmd.WaitDelay = 10 * time.Second
	return cmd.Run()
}

// CommandError reports a build command that failed. Its output (the last
// OutputLimit bytes) is kept for the user; the error line itself names only
// the program, since arguments may carry build arguments.
type CommandError struct {
	Program string
	Output  string
	Err     error
}

func (e *CommandError) Error() string { return fmt.Sprintf("%s failed: %v", e.Program, e.Err) }
func (e *CommandError) Unwrap() error { return e.Err }

// BuildOutput returns what the command printed.
func (e *CommandError) BuildOutput() string { return e.Output }

// OutputLimit is how much of a command's output a CommandError keeps.
const OutputLimit = 64 << 10

// tailBuffer keeps the last OutputLimit bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - OutputLimit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// ExternalOptions configure an External builder.
//
// Command is an argv template. These placeholders are replaced inside any
// element: {context} (the context directory), {dockerfile}, {image}
// (repo:tag), {repo}, {tag}, {target}, {platforms} (comma-separated) and
// {digest-file} (a path the command may write the pushed digest to). Two
// elements stand alone and expand to several: {build-args} becomes
// BuildArgFlag NAME=value per build argument, sorted, and {target-args}
// becomes TargetFlag target when a target is set, else nothing. For
// example, for docker buildx:
//
//	docker buildx build --push --platform {platforms} --tag {image}
//	  --file {dockerfile} {target-args} {build-args}
//	  --metadata-file {digest-file} {context}
//
// The command also gets FLEETWRIGHT_IMAGE, FLEETWRIGHT_CONTEXT,
// FLEETWRIGHT_DOCKERFILE, FLEETWRIGHT_TARGET, FLEETWRIGHT_PLATFORMS,
// FLEETWRIGHT_DIGEST_FILE, SOURCE_DATE_EPOCH and one
// FLEETWRIGHT_BUILD_ARG_<NAME> per build argument in its environment, and
// runs in the context directory.
type ExternalOptions struct {
	Command      []string
	BuildArgFlag string // default "--build-arg"
	TargetFlag   string // default "--target"
	// Env is the command's environment; nil inherits this process's.
	Env []string
	// Registry reads back the pushed digest. Required.
	Registry *registry.Client
	// Runner runs the command; nil means ExecRunner.
	Runner Runner
	// TempDir holds the digest file; "" means the system's.
	TempDir string
	// Output, when set, receives the command's output as it runs.
	Output io.Writer
	Logger *slog.Logger
}

// External builds by running a configured command that builds and pushes
// the image, then reads back the digest: from the digest file when the
// command writes one (a bare digest as kaniko's --digest-file writes, or
// buildx's --metadata-file JSON), checked against the registry, else from
// the registry.
type External struct {
	opts ExternalOptions
	log  *slog.Logger
}

// NewExternal returns an External builder.
func NewExternal(opts ExternalOptions) (*External, error) {
	if len(opts.Command) == 0 {
		return nil, errors.New("external builder: no command configured")
	}
	if opts.Registry == nil {
		return nil, errors.New("external builder: no registry client")
	}
	if opts.BuildArgFlag == "" {
		opts.BuildArgFlag = "--build-arg"
	}
	if opts.TargetFlag == "" {
		opts.TargetFlag = "--target"
	}
	if opts.Runner == nil {
		opts.Runner = ExecRunner{}
	}
	return &External{opts: opts, log: logger(opts.Logger)}, nil
}

// Build implements Builder. The request must carry a Tag.
func (e *External) Build(ctx context.Context, req Request) (Result, error) {
	req, _, err := req.normalize()
	if err != nil {
		return Result{}, err
	}
	ps, err := resolvePaths(req)
	if err != nil {
		return Result{}, buildErr(req.Name, err)
	}
	tmp, err := os.MkdirTemp(e.opts.TempDir, "fleetwright-build-")
	if err != nil {
		return Result{}, buildErr(req.Name, err)
	}
	defer os.RemoveAll(tmp)
	digestFile := filepath.Join(tmp, "digest")
	image := req.Repo + ":" + req.Tag

	repl := strings.NewReplacer(
		"{context}", ps.dir,
		"{dockerfile}", ps.dockerfile,
		"{image}", image,
		"{repo}", req.Repo,
		"{tag}", req.Tag,
		"{target}", req.Target,
		"{platforms}", strings.Join(req.Platforms, ","),
		"{digest-file}", digestFile,
	)
	names := slices.Sorted(maps.Keys(req.BuildArgs))
	var args []string
	usesDigestFile := false
	for _, a := range e.opts.Command {
		switch a {
		case "{build-args}":
			for _, k := range names {
				args = append(args, e.opts.BuildArgFlag, k+"="+req.BuildArgs[k])
			}
			continue
		case "{target-args}":
			if req.Target != "" {
				args = append(args, e.opts.TargetFlag, req.Target)
			}
			continue
		}
		usesDigestFile = usesDigestFile || strings.Contains(a, "{digest-file}")
		args = append(args, repl.Replace(a))
	}
	extra := []string{
		"FLEETWRIGHT_IMAGE=" + image,
		"FLEETWRIGHT_CONTEXT=" + ps.dir,
		"FLEETWRIGHT_DOCKERFILE=" + ps.dockerfile,
		"FLEETWRIGHT_TARGET=" + req.Target,
		"FLEETWRIGHT_PLATFORMS=" + strings.Join(req.Platforms, ","),
		"FLEETWRIGHT_DIGEST_FILE=" + digestFile,
		"SOURCE_DATE_EPOCH=" + strconv.FormatInt(req.SourceDateEpoch, 10),
	}
	for _, k := range names {
		extra = append(extra, "FLEETWRIGHT_BUILD_ARG_"+k+"="+req.BuildArgs[k])
	}

	var out tailBuffer
	var w io.Writer = &out
	if e.opts.Output != nil {
		w = io.MultiWriter(&out, e.opts.Output)
	}
	program := filepath.Base(args[0])
	e.log.Debug("running external build", "build", req.Name, "program", program, "image", image)
	err = e.opts.Runner.Run(ctx, Command{Args: args, Env: e.opts.Env, ExtraEnv: extra, Dir: ps.dir, Stdout: w, Stderr: w})
	if err != nil {
		return Result{}, buildErr(req.Name, &CommandError{Program: program, Output: out.String(), Err: err})
	}

	var fromFile *v1.Hash
	if usesDigestFile {
		data, err := os.ReadFile(digestFile)
		if err != nil {
			return Result{}, buildErr(req.Name, fmt.Errorf("%s wrote no digest file: %w", program, err))
		}
		h, err := parseDigestFile(data)
		if err != nil {
			return Result{}, buildErr(req.Name, fmt.Errorf("%s's digest file: %w", program, err))
		}
		fromFile = &h
	}
	h, err := e.opts.Registry.Digest(ctx, image)
	if err != nil {
		return Result{}, buildErr(req.Name, fmt.Errorf("%s succeeded but the image cannot be read back: %w", program, err))
	}
	if fromFile != nil && *fromFile != h {
		return Result{}, buildErr(req.Name, fmt.Errorf("%s reported digest %s but %s is %s", program, fromFile, image, h))
	}
	return Result{
		Ref:       image + "@" + h.String(),
		Repo:      req.Repo,
		Tag:       req.Tag,
		Digest:    h.String(),
		Platforms: req.Platforms,
	}, nil
}

var sha256Digest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// parseDigestFile reads a digest written by a build command: a bare
// `sha256:...`, a `name@sha256:...`, or JSON metadata with a
// "containerimage.digest" field (docker buildx --metadata-file).
func parseDigestFile(data []byte) (v1.Hash, error) {
	s := strings.TrimSpace(string(data))
	if strings.HasPrefix(s, "{") {
		var meta map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &meta); err != nil {
			return v1.Hash{}, fmt.Errorf("reading metadata: %w", err)
		}
		raw, ok := meta["containerimage.digest"]
		if !ok {
			return v1.Hash{}, errors.New(`metadata has no "containerimage.digest"`)
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return v1.Hash{}, fmt.Errorf(`metadata "containerimage.digest": %w`, err)
		}
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		s = s[i+1:]
	}
	if !sha256Digest.MatchString(s) {
		return v1.Hash{}, fmt.Errorf("%q is not a sha256 digest", truncate(s, 80))
	}
	return v1.NewHash(s)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

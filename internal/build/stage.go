package build

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// stageState is a stage being built for one platform.
type stageState struct {
	plan      *stagePlan
	img       v1.Image // what the stage's layers are appended to
	cfg       *v1.ConfigFile
	adds      []mutate.Addendum
	fs        *stageFS
	layerType types.MediaType
	args      map[string]string
	cmdSet    bool
	// known holds every path of a stage built on scratch alone; nil when a
	// registry image lies below, whose contents are not listed.
	known map[string]*fileEntry
	// rootfs is the stage unpacked for RUN; nil until a RUN needs it.
	rootfs *rootFS

	final    v1.Image
	finalCfg *v1.ConfigFile
}

// env returns the variables for expansion.
func (st *stageState) env() env {
	vars := make(map[string]string, len(st.cfg.Config.Env))
	for _, kv := range st.cfg.Config.Env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return env{vars: vars, args: st.args}
}

// runPlan builds the plan's stages and returns the target's image.
func (x *executor) runPlan(ctx context.Context, df *dockerfile, p *plan) (v1.Image, error) {
	lex := shell.NewLex(df.escape)
	raw := shell.NewLex(df.escape)
	raw.RawQuotes, raw.RawEscapes = true, true
	done := map[int]*stageState{}
	for _, sp := range p.needed {
		st, err := x.startStage(ctx, df, sp, done)
		if err != nil {
			return nil, err
		}
		for _, c := range sp.stage.Commands {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := x.dispatch(ctx, df, p, st, c, lex, raw, done); err != nil {
				return nil, err
			}
		}
		if err := x.finish(st); err != nil {
			return nil, err
		}
		done[sp.index] = st
	}
	return done[p.target.index].final, nil
}

func (x *executor) startStage(ctx context.Context, df *dockerfile, sp *stagePlan, done map[int]*stageState) (*stageState, error) {
	st := &stageState{plan: sp, args: map[string]string{}}
	switch {
	case sp.baseStage >= 0:
		parent := done[sp.baseStage]
		st.img = parent.final
		st.cfg = parent.finalCfg.DeepCopy()
		st.fs = parent.fs.clone()
		st.known = cloneKnown(parent.known)
		st.layerType = parent.layerType
	case strings.EqualFold(sp.base, "scratch"):
		st.img, st.cfg = scratchImage(sp.platform)
		st.fs = &stageFS{}
		st.known = map[string]*fileEntry{}
		st.layerType = types.OCILayer
	default:
		b, err := x.base(ctx, df, imageUse{ref: sp.base, platform: sp.platform, line: sp.line})
		if err != nil {
			return nil, err
		}
		img, err := b.forPlatform(sp.platform)
		if err != nil {
			return nil, df.errorf(sp.line, "%w", err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, df.errorf(sp.line, "%s: %w", sp.base, err)
		}
		layers, err := img.Layers()
		if err != nil {
			return nil, df.errorf(sp.line, "%s: %w", sp.base, err)
		}
		if st.layerType, err = layerMediaType(img); err != nil {
			return nil, df.errorf(sp.line, "%s: %w", sp.base, err)
		}
		st.img, st.cfg = img, cf.DeepCopy()
		st.fs = &stageFS{}
		for _, l := range layers {
			st.fs.layers = append(st.fs.layers, fsLayer{remote: l})
		}
	}
	if len(st.cfg.Config.OnBuild) > 0 {
		return nil, &UnsupportedError{File: df.file, Line: sp.line, Instruction: "FROM " + sp.base,
			Reason: "inherits ONBUILD triggers, which need a container runtime"}
	}
	return st, nil
}

// finish assembles the stage's image: its layers, history and config.
func (x *executor) finish(st *stageState) error {
	img, err := mutate.Append(st.img, st.adds...)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Config = st.cfg.Config
	cf.Author = st.cfg.Author
	cf.OS, cf.Architecture, cf.Variant = st.cfg.OS, st.cfg.Architecture, st.cfg.Variant
	cf.Created = v1.Time{Time: x.epoch}
	if st.final, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	st.finalCfg = cf
	return nil
}

// history records an instruction that adds no layer.
func (x *executor) history(st *stageState, c instructions.Command) {
	st.adds = append(st.adds, mutate.Addendum{History: v1.History{
		Created:    v1.Time{Time: x.epoch},
		CreatedBy:  commandText(c),
		EmptyLayer: true,
	}})
}

func commandText(c instructions.Command) string {
	if s, ok := c.(fmt.Stringer); ok {
		return s.String()
	}
	return strings.ToUpper(c.Name())
}

// dispatch executes one instruction of a stage, its words expanded: ARG
// sets a build argument, COPY, ADD and RUN add a layer, the others change
// the image's configuration and its history.
func (x *executor) dispatch(ctx context.Context, df *dockerfile, p *plan, st *stageState, c instructions.Command, lex, raw *shell.Lex, done map[int]*stageState) error {
	line := lineOf(c)
	if err := expandInstr(st, c, lex, raw); err != nil {
		return df.errorf(line, "%s: %v", strings.ToUpper(c.Name()), err)
	}
	switch c := c.(type) {
	case *instructions.ArgCommand:
		for _, kv := range c.Args {
			if v, ok := x.req.BuildArgs[kv.Key]; ok {
				st.args[kv.Key] = v
			} else if kv.Value != nil {
				st.args[kv.Key] = *kv.Value
			} else if v, ok := p.meta[kv.Key]; ok {
				st.args[kv.Key] = v
			}
		}
		return nil
	case *instructions.CopyCommand:
		return x.copy(ctx, df, p, st, copySpec{
			line: line, code: c.String(), sources: c.SourcePaths, contents: c.SourceContents,
			dest: c.DestPath, from: c.From, chown: c.Chown, chmod: c.Chmod, excludes: c.ExcludePatterns,
		}, done)
	case *instructions.AddCommand:
		return x.copy(ctx, df, p, st, copySpec{
			line: line, code: c.String(), sources: c.SourcePaths, contents: c.SourceContents,
			dest: c.DestPath, chown: c.Chown, chmod: c.Chmod, excludes: c.ExcludePatterns,
			add: true, unpack: c.Unpack,
		}, done)
	case *instructions.RunCommand:
		return x.runInstr(ctx, df, p, st, c, done)
	}
	known, err := configure(df, st, c, lex, line)
	if err != nil {
		return err
	}
	if !known {
		return &UnsupportedError{File: df.file, Line: line, Instruction: strings.ToUpper(c.Name()), Reason: "is not supported by the built-in builder"}
	}
	x.history(st, c)
	return nil
}

// expandInstr expands the words of c in the stage's environment: with lex
// those it expands as single words, with raw (quotes kept) the others.
func expandInstr(st *stageState, c instructions.Command, lex, raw *shell.Lex) error {
	with := func(l *shell.Lex) func(string) (string, error) {
		return func(w string) (string, error) {
			v, _, err := l.ProcessWord(w, st.env())
			return v, err
		}
	}
	if ex, ok := c.(instructions.SupportsSingleWordExpansion); ok {
		if err := ex.Expand(with(lex)); err != nil {
			return err
		}
	}
	if ex, ok := c.(instructions.SupportsSingleWordExpansionRaw); ok {
		return ex.ExpandRaw(with(raw))
	}
	return nil
}

// configure applies to the stage's image configuration the instruction c
// at line, one that changes only that; known is false for an instruction
// that is none of them.
func configure(df *dockerfile, st *stageState, c instructions.Command, lex *shell.Lex, line int) (known bool, err error) {
	cfg := &st.cfg.Config
	switch c := c.(type) {
	case *instructions.EnvCommand:
		for _, kv := range c.Env {
			cfg.Env = setEnv(cfg.Env, kv.Key, kv.Value)
		}
	case *instructions.LabelCommand:
		if cfg.Labels == nil {
			cfg.Labels = map[string]string{}
		}
		for _, kv := range c.Labels {
			cfg.Labels[kv.Key] = kv.Value
		}
	case *instructions.WorkdirCommand:
		wd := c.Path
		if !path.IsAbs(wd) {
			base := cfg.WorkingDir
			if base == "" {
				base = "/"
			}
			wd = path.Join(base, wd)
		}
		cfg.WorkingDir = path.Clean(wd)
	case *instructions.UserCommand:
		cfg.User = c.User
	case *instructions.ExposeCommand:
		if err := exposePorts(cfg, c, lex, st.env()); err != nil {
			return true, df.errorf(line, "EXPOSE: %v", err)
		}
	case *instructions.EntrypointCommand:
		cfg.Entrypoint = commandLine(c.ShellDependantCmdLine, cfg.Shell)
		if !st.cmdSet {
			cfg.Cmd = nil
		}
	case *instructions.CmdCommand:
		cfg.Cmd = commandLine(c.ShellDependantCmdLine, cfg.Shell)
		st.cmdSet = true
	case *instructions.ShellCommand:
		cfg.Shell = slices.Clone(c.Shell)
	case *instructions.StopSignalCommand:
		cfg.StopSignal = c.Signal
	case *instructions.HealthCheckCommand:
		h := c.Health
		cfg.Healthcheck = &v1.HealthConfig{
			Test:        slices.Clone(h.Test),
			Interval:    h.Interval,
			Timeout:     h.Timeout,
			StartPeriod: h.StartPeriod,
			Retries:     h.Retries,
		}
	case *instructions.VolumeCommand:
		if cfg.Volumes == nil {
			cfg.Volumes = map[string]struct{}{}
		}
		for _, v := range c.Volumes {
			if v == "" {
				return true, df.errorf(line, "VOLUME: empty path")
			}
			cfg.Volumes[v] = struct{}{}
		}
	case *instructions.OnbuildCommand:
		cfg.OnBuild = append(cfg.OnBuild, c.Expression)
	case *instructions.MaintainerCommand:
		st.cfg.Author = c.Maintainer
	default:
		return false, nil
	}
	return true, nil
}

// exposePorts adds the ports of EXPOSE c, its words expanded in env, to
// cfg.
func exposePorts(cfg *v1.Config, c *instructions.ExposeCommand, lex *shell.Lex, env shell.EnvGetter) error {
	for _, word := range c.Ports {
		words, err := lex.ProcessWords(word, env)
		if err != nil {
			return err
		}
		for _, w := range words {
			ports, err := parsePorts(w)
			if err != nil {
				return err
			}
			if cfg.ExposedPorts == nil {
				cfg.ExposedPorts = map[string]struct{}{}
			}
			for _, port := range ports {
				cfg.ExposedPorts[port] = struct{}{}
			}
		}
	}
	return nil
}

// setEnv sets k in a KEY=value list, in place when present.
func setEnv(list []string, k, v string) []string {
	for i, kv := range list {
		if name, _, _ := strings.Cut(kv, "="); name == k {
			list[i] = k + "=" + v
			return list
		}
	}
	return append(list, k+"="+v)
}

// commandLine is CMD's or ENTRYPOINT's argv as Docker stores it: the exec
// form as written, the shell form as the stage's shell plus the line.
func commandLine(c instructions.ShellDependantCmdLine, shellCmd []string) []string {
	if !c.PrependShell {
		return slices.Clone(c.CmdLine)
	}
	sh := shellCmd
	if len(sh) == 0 {
		sh = []string{"/bin/sh", "-c"}
	}
	return append(slices.Clone(sh), strings.Join(c.CmdLine, " "))
}

// parsePorts parses an EXPOSE word: port[-port][/protocol].
func parsePorts(w string) ([]string, error) {
	spec, proto, hasProto := strings.Cut(w, "/")
	proto = strings.ToLower(proto)
	if !hasProto {
		proto = "tcp"
	}
	switch proto {
	case "tcp", "udp", "sctp":
	default:
		return nil, fmt.Errorf("%q: protocol must be tcp, udp or sctp", w)
	}
	lo, hi, isRange := strings.Cut(spec, "-")
	start, err := parsePort(lo)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", w, err)
	}
	end := start
	if isRange {
		if end, err = parsePort(hi); err != nil {
			return nil, fmt.Errorf("%q: %w", w, err)
		}
		if end < start {
			return nil, fmt.Errorf("%q: range ends before it starts", w)
		}
	}
	var out []string
	for p := start; p <= end; p++ {
		out = append(out, strconv.Itoa(p)+"/"+proto)
	}
	return out, nil
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("invalid port %q", s)
	}
	return n, nil
}

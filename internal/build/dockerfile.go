package build

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// dockerfile is a parsed Dockerfile.
type dockerfile struct {
	file     string // as shown in messages
	escape   rune
	metaArgs []instructions.ArgCommand
	stages   []instructions.Stage
}

// parseDockerfile parses src with BuildKit's parser.
func parseDockerfile(file string, src []byte) (*dockerfile, error) {
	res, err := parser.Parse(bytes.NewReader(src))
	if err != nil {
		return nil, &DockerfileError{File: file, Line: errorLine(err), Err: errors.New(errorText(err))}
	}
	stages, meta, err := instructions.Parse(res.AST, nil)
	if err != nil {
		return nil, &DockerfileError{File: file, Line: errorLine(err), Err: errors.New(errorText(err))}
	}
	if len(stages) == 0 {
		return nil, &DockerfileError{File: file, Err: errors.New("no FROM instruction")}
	}
	return &dockerfile{file: file, escape: res.EscapeToken, metaArgs: meta, stages: stages}, nil
}

// errorLine digs the Dockerfile line out of a BuildKit error.
func errorLine(err error) int {
	var le *parser.LocationError
	if errors.As(err, &le) && len(le.Locations) > 0 && len(le.Locations[0]) > 0 {
		return le.Locations[0][0].Start.Line
	}
	var ue *instructions.UnknownInstructionError
	if errors.As(err, &ue) {
		return ue.Line
	}
	return 0
}

// errorText is a BuildKit error's message without its location wrapper.
func errorText(err error) string {
	var le *parser.LocationError
	if errors.As(err, &le) && le.Unwrap() != nil {
		return le.Unwrap().Error()
	}
	return err.Error()
}

func lineOf(c interface{ Location() []parser.Range }) int {
	if loc := c.Location(); len(loc) > 0 {
		return loc[0].Start.Line
	}
	return 0
}

func stageLine(st *instructions.Stage) int {
	if len(st.Location) > 0 {
		return st.Location[0].Start.Line
	}
	return 0
}

// env is a set of variables for expansion, ENV over ARG as Docker does.
type env struct {
	vars map[string]string // ENV values
	args map[string]string // ARG values
}

func (e env) Get(k string) (string, bool) {
	if v, ok := e.vars[k]; ok {
		return v, true
	}
	v, ok := e.args[k]
	return v, ok
}

func (e env) Keys() []string {
	keys := map[string]bool{}
	for k := range e.vars {
		keys[k] = true
	}
	for k := range e.args {
		keys[k] = true
	}
	return slices.Sorted(maps.Keys(keys))
}

// platformArgs are the automatic platform ARGs of BuildKit.
func platformArgs(target, build v1.Platform) map[string]string {
	return map[string]string{
		"TARGETPLATFORM": platformString(target),
		"TARGETOS":       target.OS,
		"TARGETARCH":     target.Architecture,
		"TARGETVARIANT":  target.Variant,
		"BUILDPLATFORM":  platformString(build),
		"BUILDOS":        build.OS,
		"BUILDARCH":      build.Architecture,
		"BUILDVARIANT":   build.Variant,
	}
}

// stagePlan is a stage the target needs, with its FROM resolved.
type stagePlan struct {
	index     int
	stage     *instructions.Stage
	base      string // expanded image reference, "scratch", or a stage name
	baseStage int    // index of the stage it builds on, or -1
	platform  v1.Platform
	line      int
}

// plan is what to build for one platform.
type plan struct {
	platform v1.Platform
	meta     map[string]string // global ARGs and automatic ARGs
	needed   []*stagePlan      // in Dockerfile order
	byIndex  map[int]*stagePlan
	target   *stagePlan
	images   []imageUse // registry images the needed stages read
}

// imageUse is a registry image read by FROM or COPY --from.
type imageUse struct {
	ref      string
	platform v1.Platform
	line     int
}

func (d *dockerfile) errorf(line int, format string, a ...any) error {
	return &DockerfileError{File: d.file, Line: line, Err: fmt.Errorf(format, a...)}
}

// stageByName finds a stage by name (case-insensitive) or by number among
// the stages before limit.
func (d *dockerfile) stageByName(name string, limit int) (int, bool) {
	if n, err := strconv.Atoi(name); err == nil && n >= 0 && n < limit {
		return n, true
	}
	for i := 0; i < limit; i++ {
		if d.stages[i].Name != "" && strings.EqualFold(d.stages[i].Name, name) {
			return i, true
		}
	}
	return -1, false
}

// plan resolves the stages target needs for one platform and rejects any
// instruction the daemonless builder cannot execute.
func (d *dockerfile) plan(target, buildPlatform v1.Platform, buildArgs map[string]string, targetName string) (*plan, error) {
	lex := shell.NewLex(d.escape)
	meta, err := d.globalArgs(lex, platformArgs(target, buildPlatform), buildArgs)
	if err != nil {
		return nil, err
	}
	p := &plan{platform: target, meta: meta, byIndex: map[int]*stagePlan{}}
	all, err := d.stagePlans(lex, meta, target)
	if err != nil {
		return nil, err
	}
	if targetName == "" {
		p.target = all[len(all)-1]
	} else {
		i, ok := d.stageByName(targetName, len(d.stages))
		if !ok || isNumber(targetName) {
			return nil, &DockerfileError{File: d.file, Err: fmt.Errorf("target stage %q not found", targetName)}
		}
		p.target = all[i]
	}
	w := &planWalk{d: d, lex: lex, all: all, p: p, seen: map[int]bool{}}
	if err := w.visit(p.target); err != nil {
		return nil, err
	}
	for _, sp := range all {
		if w.seen[sp.index] {
			p.needed = append(p.needed, sp)
			p.byIndex[sp.index] = sp
		}
	}
	if err := d.checkSupported(p.needed); err != nil {
		return nil, err
	}
	return p, nil
}

// globalArgs adds to meta, the automatic platform ARGs, the ARGs before
// the first FROM: the build's value of each, else its default expanded.
func (d *dockerfile) globalArgs(lex *shell.Lex, meta, buildArgs map[string]string) (map[string]string, error) {
	for _, a := range d.metaArgs {
		for _, kv := range a.Args {
			if v, ok := buildArgs[kv.Key]; ok {
				meta[kv.Key] = v
				continue
			}
			if kv.Value == nil {
				continue
			}
			v, _, err := lex.ProcessWord(*kv.Value, env{args: meta})
			if err != nil {
				return nil, d.errorf(lineOf(&a), "ARG %s: %v", kv.Key, err)
			}
			meta[kv.Key] = v
		}
	}
	return meta, nil
}

// stagePlans resolves the FROM of every stage with the global ARGs meta:
// its base, an image or an earlier stage, and its platform (target's
// unless --platform says otherwise).
func (d *dockerfile) stagePlans(lex *shell.Lex, meta map[string]string, target v1.Platform) ([]*stagePlan, error) {
	all := make([]*stagePlan, len(d.stages))
	for i := range d.stages {
		st := &d.stages[i]
		sp := &stagePlan{index: i, stage: st, baseStage: -1, platform: target, line: stageLine(st)}
		base, _, err := lex.ProcessWord(st.BaseName, env{args: meta})
		if err != nil {
			return nil, d.errorf(sp.line, "FROM %s: %v", st.BaseName, err)
		}
		if base == "" {
			return nil, d.errorf(sp.line, "FROM %s: empty image name", st.BaseName)
		}
		sp.base = base
		if j, ok := d.stageByName(base, i); ok && !isNumber(base) {
			sp.baseStage = j
		}
		if st.Platform != "" {
			ps, _, err := lex.ProcessWord(st.Platform, env{args: meta})
			if err != nil {
				return nil, d.errorf(sp.line, "FROM --platform=%s: %v", st.Platform, err)
			}
			if sp.platform, err = parsePlatform(ps); err != nil {
				return nil, d.errorf(sp.line, "FROM --platform: %v", err)
			}
		}
		all[i] = sp
	}
	return all, nil
}

// planWalk walks the dependencies of a plan's target: the stages it
// builds on or reads from, marked in seen, and the registry images they
// read, added to p.images.
type planWalk struct {
	d    *dockerfile
	lex  *shell.Lex
	all  []*stagePlan
	p    *plan
	seen map[int]bool
}

// visit walks sp and, first, the stages it needs.
func (w *planWalk) visit(sp *stagePlan) error {
	if w.seen[sp.index] {
		return nil
	}
	w.seen[sp.index] = true
	switch {
	case sp.baseStage >= 0:
		if err := w.visit(w.all[sp.baseStage]); err != nil {
			return err
		}
	case !strings.EqualFold(sp.base, "scratch"):
		w.p.images = append(w.p.images, imageUse{ref: sp.base, platform: sp.platform, line: sp.line})
	}
	for _, c := range sp.stage.Commands {
		what, froms := commandFroms(c)
		line := lineOf(c.(interface{ Location() []parser.Range }))
		for _, f := range froms {
			if err := w.visitFrom(sp, what, f, line); err != nil {
				return err
			}
		}
	}
	return nil
}

// visitFrom walks what the from= f of an instruction (what: COPY --from
// or RUN --mount from) of sp at line names: an earlier stage, or an image.
func (w *planWalk) visitFrom(sp *stagePlan, what, f string, line int) error {
	d := w.d
	from, _, err := w.lex.ProcessWord(f, env{args: w.p.meta})
	if err != nil {
		return d.errorf(line, "%s=%s: %v", what, f, err)
	}
	if j, ok := d.stageByName(from, sp.index); ok {
		return w.visit(w.all[j])
	}
	if _, ok := d.stageByName(from, len(d.stages)); ok {
		return d.errorf(line, "%s=%s: the stage is defined later", what, from)
	}
	w.p.images = append(w.p.images, imageUse{ref: from, platform: w.p.platform, line: line})
	return nil
}

// commandFroms returns the from= values of an instruction that reads
// another stage or an image (COPY --from, RUN --mount=type=bind,from=),
// with how messages name them.
func commandFroms(c instructions.Command) (what string, froms []string) {
	what = "COPY --from"
	switch c := c.(type) {
	case *instructions.CopyCommand:
		if c.From != "" {
			froms = append(froms, c.From)
		}
	case *instructions.RunCommand:
		what = "RUN --mount from"
		for _, m := range instructions.GetMounts(c) {
			if m.From != "" && m.Type == instructions.MountTypeBind {
				froms = append(froms, m.From)
			}
		}
	}
	return what, froms
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// checkSupported returns the first instruction, by line, that the
// daemonless builder cannot execute.
func (d *dockerfile) checkSupported(stages []*stagePlan) error {
	var first *UnsupportedError
	note := func(line int, instr, reason string) {
		if first == nil || line < first.Line {
			first = &UnsupportedError{File: d.file, Line: line, Instruction: instr, Reason: reason}
		}
	}
	for _, sp := range stages {
		for _, c := range sp.stage.Commands {
			switch c := c.(type) {
			case *instructions.RunCommand:
				// Parse the mounts with their words as written to see their
				// types; dispatch parses them again with variables expanded.
				if err := c.Expand(func(w string) (string, error) { return w, nil }); err != nil {
					return d.errorf(lineOf(c), "RUN --mount: %v", err)
				}
				for _, m := range instructions.GetMounts(c) {
					if m.Type == instructions.MountTypeSSH {
						note(lineOf(c), "RUN --mount=type=ssh", "is not supported by the built-in builder")
					}
				}
			case *instructions.AddCommand:
				for _, src := range c.SourcePaths {
					if kind := remoteSource(src); kind != "" {
						note(lineOf(c), "ADD "+kind, "needs a container runtime")
					}
				}
			case *instructions.CopyCommand:
				if c.Parents {
					note(lineOf(c), "COPY --parents", "is not supported by the built-in builder")
				}
			}
		}
	}
	if first != nil {
		return first
	}
	return nil
}

// firstRun returns the line of the first RUN of the stages, or 0.
func firstRun(stages []*stagePlan) int {
	first := 0
	for _, sp := range stages {
		for _, c := range sp.stage.Commands {
			if r, ok := c.(*instructions.RunCommand); ok && (first == 0 || lineOf(r) < first) {
				first = lineOf(r)
			}
		}
	}
	return first
}

// hasRun reports whether any stage has a RUN instruction.
func hasRun(d *dockerfile) bool {
	for _, st := range d.stages {
		for _, c := range st.Commands {
			if _, ok := c.(*instructions.RunCommand); ok {
				return true
			}
		}
	}
	return false
}

// remoteSource names the kind of an ADD source fetched over the network,
// or "" for a local path.
func remoteSource(src string) string {
	lower := strings.ToLower(src)
	switch {
	case strings.HasPrefix(lower, "git@"), strings.HasPrefix(lower, "git://"),
		strings.HasPrefix(lower, "ssh://"), strings.HasSuffix(strings.SplitN(lower, "#", 2)[0], ".git") && strings.Contains(lower, "://"):
		return "<git repository>"
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return "<url>"
	}
	return ""
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/spec"
)

var digits = regexp.MustCompile(`^[0-9]+$`)

// runRollback restores an app's folder as it was at a past revision and
// commits that as a new commit on top of the history; nothing is reverted
// and no history is rewritten.
func runRollback(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render rollback", io)
	f := addEditFlags(fs, true)
	to := fs.String("to", "", "the revision to restore: a commit, branch or tag, or with --webhook a deployment id")
	wf := addWebhookFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *to == "" {
		return cli.Usagef("usage: render rollback APP --to REF [--webhook URL --token-file F]")
	}
	client, err := wf.client()
	if err != nil {
		return err
	}
	w, a, err := openApp(f.repo, pos[0])
	if err != nil {
		return err
	}
	g, _, rel, err := w.openGit(io)
	if err != nil {
		return err
	}
	defer g.Close()

	ref := *to
	var dep *deployment
	if client != nil && digits.MatchString(ref) {
		id, _ := strconv.ParseInt(ref, 10, 64)
		deps, err := client.deployments(ctx, a.Project, a.Spec.Name, 0)
		if err != nil {
			return &cli.ExitError{Code: cli.ExitFailed, Err: err}
		}
		for i := range deps {
			if deps[i].ID == id {
				dep = &deps[i]
			}
		}
		switch {
		case dep == nil:
			return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%w: the webhook has no deployment %d of %s", errNoDeployment, id, appName(a))}
		case dep.SpecRevision == "":
			return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("deployment %d of %s recorded no spec revision; roll back to a commit instead", id, appName(a))}
		}
		ref = dep.SpecRevision
	}
	hash, err := g.Resolve(ref)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("no commit %q in %s: %w", ref, g.Dir(), err)}
	}
	info, err := g.History(ctx, hash, 1)
	if err != nil || len(info) == 0 {
		return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("reading commit %s: %v", hash, err)}
	}
	target := info[0]

	dir := path.Dir(a.File)
	gitDir := path.Join(rel, dir)
	old, err := g.Tree(ctx, hash, gitDir)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailed, Err: err}
	}
	if len(old) == 0 {
		return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%s did not exist at %s", w.display(dir), short(hash))}
	}
	head, err := g.Tree(ctx, "HEAD", gitDir)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailed, Err: err}
	}
	ch := &change{write: map[string][]byte{}}
	strip := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, rel), "/") }
	for p, b := range old {
		ch.write[strip(p)] = b
	}
	for _, p := range slices.Sorted(maps.Keys(head)) {
		if _, kept := old[p]; !kept {
			ch.remove = append(ch.remove, strip(p))
		}
	}
	same := len(ch.remove) == 0
	for p, b := range old {
		if !bytes.Equal(head[p], b) {
			same = false
		}
	}
	if same && !w.workTreeDiffers(ch) {
		fmt.Fprintf(io.out, "%s is already as it was at %s; nothing to do\n", appName(a), short(hash))
		return nil
	}
	if t := a.Spec.Template; t != nil {
		tdir := path.Join(rel, spec.TemplateDir(t.Name))
		then, err1 := g.Tree(ctx, hash, tdir)
		now, err2 := g.Tree(ctx, "HEAD", tdir)
		if err1 == nil && err2 == nil && !maps.EqualFunc(then, now, bytes.Equal) {
			fmt.Fprintf(io.err, "warning: template %s changed since %s; the rollback restores %s only, and the app renders with the template as it is now\n", t.Name, short(hash), w.display(dir))
		}
	}

	what := short(hash)
	if dep != nil {
		what = fmt.Sprintf("deployment %d (%s)", dep.ID, short(hash))
	}
	ch.subject = fmt.Sprintf("rollback %s to %s", appName(a), what)
	var body strings.Builder
	fmt.Fprintf(&body, "Restores %s/ as it was at commit %s:\n", dir, hash)
	fmt.Fprintf(&body, "    %s (%s, %s)\n", target.Subject, target.Author.Name, target.Author.When.UTC().Format("2006-01-02 15:04:05Z"))
	if dep != nil {
		fmt.Fprintf(&body, "That spec was deployed as deployment %d (fleet revision %s, phase %s).\n", dep.ID, dep.Revision, dep.Phase)
	}
	fmt.Fprintf(&body, "\nRollback-To: %s", hash)
	ch.body = body.String()
	ch.done = fmt.Sprintf("restored %s to %s (%s/)", appName(a), what, w.display(dir))
	return w.apply(ctx, ch, f, io)
}

// workTreeDiffers reports whether the work tree's files differ from what
// the change writes (uncommitted edits a rollback would undo).
func (w *workspace) workTreeDiffers(ch *change) bool {
	return w.diff(ch) != ""
}

func short(hash string) string { return hash[:min(len(hash), 12)] }

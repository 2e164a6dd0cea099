package lifecycle

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

	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

var digits = regexp.MustCompile(`^[0-9]+$`)

// Rollback restores the app's folder as it was at the revision to: a
// commit, branch or tag or, when o.Deployments is set and to is a number,
// the spec revision of that deployment. Committed, it is a new commit on
// top of the history: nothing is reverted and no history is rewritten.
// With o.Environment the app is the one in the environment's cluster, and
// a deployment id must be one of that environment's.
func Rollback(ctx context.Context, o Options, to string) (*Change, error) {
	w, a, err := openApp(o)
	if err != nil {
		return nil, err
	}
	if err := promotedOnly(&w.repo.Platform, o.Environment, a.Ref()); err != nil {
		return nil, err
	}
	g, rel, err := openGit(o, w.root, w.abs)
	if err != nil {
		return nil, err
	}
	defer g.Close()

	ref := to
	var dep *api.Deployment
	if o.Deployments != nil && digits.MatchString(ref) {
		if dep, err = findDeployment(ctx, o.Deployments, a, o.Environment, ref); err != nil {
			return nil, err
		}
		ref = dep.SpecRevision
	}
	hash, err := g.Resolve(ref)
	if err != nil {
		return nil, refuse("no commit %q in %s: %w", ref, g.Dir(), err)
	}
	info, err := g.History(ctx, hash, 1)
	if err != nil || len(info) == 0 {
		return nil, refuse("reading commit %s: %v", hash, err)
	}

	dir := path.Dir(a.File)
	write, remove, same, err := restore(ctx, g, hash, rel, dir)
	if err != nil {
		return nil, err
	}
	if write == nil {
		return nil, refuse("%s did not exist at %s", w.display(dir), short(hash))
	}
	if same && diffFiles(w.abs, write, remove) == "" {
		return nothing("%s is already as it was at %s; nothing to do", inEnvironment(a.Ref(), o.Environment), short(hash)), nil
	}
	if t := a.Spec.Template; t != nil {
		tdir := path.Join(rel, load.TemplateDir(t.Name))
		then, err1 := g.Tree(ctx, hash, tdir)
		now, err2 := g.Tree(ctx, "HEAD", tdir)
		if err1 == nil && err2 == nil && !maps.EqualFunc(then, now, bytes.Equal) {
			o.logger().Warn(fmt.Sprintf("template %s changed since %s; the rollback restores %s only, and the app renders with the template as it is now", t.Name, short(hash), w.display(dir)))
		}
	}

	what := short(hash)
	if dep != nil {
		what = fmt.Sprintf("deployment %d (%s)", dep.ID, short(hash))
	}
	return w.done(&Change{
		Write:   write,
		Remove:  remove,
		Subject: fmt.Sprintf("rollback %s to %s", inEnvironment(a.Ref(), o.Environment), what),
		Body:    rollbackBody(dir, hash, info[0], dep),
		Done:    fmt.Sprintf("restored %s to %s (%s/)", inEnvironment(a.Ref(), o.Environment), what, w.display(dir)),
	})
}

// rollbackBody is the body of the commit message that restores dir as it
// was at the commit hash (described by target), which dep deployed (when
// known).
func rollbackBody(dir, hash string, target gitrepo.Commit, dep *api.Deployment) string {
	var body strings.Builder
	fmt.Fprintf(&body, "Restores %s/ as it was at commit %s:\n", dir, hash)
	fmt.Fprintf(&body, "    %s (%s, %s)\n", target.Subject, target.Author.Name, target.Author.When.UTC().Format("2006-01-02 15:04:05Z"))
	if dep != nil {
		in := ""
		if dep.Environment != "" {
			in = " in " + dep.Environment
		}
		fmt.Fprintf(&body, "That spec was deployed%s as deployment %d (fleet revision %s, phase %s).\n", in, dep.ID, dep.Revision, dep.Phase)
	}
	fmt.Fprintf(&body, "\nRollback-To: %s", hash)
	return body.String()
}

// findDeployment finds the deployment whose id is the number id among
// the app's deployments in env (all of them when env is empty).
func findDeployment(ctx context.Context, l DeploymentLister, a *load.LoadedApp, env, id string) (*api.Deployment, error) {
	n, _ := strconv.ParseInt(id, 10, 64)
	deps, err := l.DeploymentsIn(ctx, a.Project, a.Spec.Name, env, 0)
	if err != nil {
		return nil, refused(err)
	}
	var dep *api.Deployment
	for i := range deps {
		if deps[i].ID == n {
			dep = &deps[i]
		}
	}
	switch {
	case dep == nil:
		return nil, refuse("%w: the webhook has no deployment %d of %s", ErrNoDeployment, n, inEnvironment(a.Ref(), env))
	case dep.SpecRevision == "":
		return nil, refuse("deployment %d of %s recorded no spec revision; roll back to a commit instead", n, a.Ref())
	}
	return dep, nil
}

// restore reads the folder dir of the apps repository (at rel in the Git
// work tree) at the commit hash: write holds its files then, remove the
// files HEAD has that it did not, both by path under the apps repository,
// and same tells whether HEAD holds the folder as it was. write is nil
// when the folder did not exist then.
func restore(ctx context.Context, g *gitrepo.Repo, hash, rel, dir string) (write map[string][]byte, remove []string, same bool, err error) {
	gitDir := path.Join(rel, dir)
	old, err := g.Tree(ctx, hash, gitDir)
	switch {
	case err != nil:
		return nil, nil, false, refused(err)
	case len(old) == 0:
		return nil, nil, false, nil
	}
	head, err := g.Tree(ctx, "HEAD", gitDir)
	if err != nil {
		return nil, nil, false, refused(err)
	}
	strip := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, rel), "/") }
	write = map[string][]byte{}
	for p, b := range old {
		write[strip(p)] = b
	}
	for _, p := range slices.Sorted(maps.Keys(head)) {
		if _, kept := old[p]; !kept {
			remove = append(remove, strip(p))
		}
	}
	same = len(remove) == 0
	for p, b := range old {
		if !bytes.Equal(head[p], b) {
			same = false
		}
	}
	return write, remove, same, nil
}

func short(hash string) string { return hash[:min(len(hash), 12)] }

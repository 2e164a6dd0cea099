package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/hint"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/template"
)

// Lifecycle verbs edit the specs of the apps repository: each change is
// validated with the spec loader before anything is written, then left
// in the work tree or committed.

// editFlags are the flags of every verb that changes the apps repository.
type editFlags struct {
	repo    string
	commit  bool
	author  string
	message string
	dryRun  bool
	format  string
}

func addEditFlags(fs *flag.FlagSet, commitByDefault bool) *editFlags {
	f := &editFlags{}
	fs.StringVar(&f.repo, "repo", ".", "the apps repository (or a folder inside it)")
	fs.BoolVar(&f.commit, "commit", commitByDefault, "commit the change with Git (else leave it in the work tree)")
	fs.StringVar(&f.author, "author", "", "commit author as 'Name <email>' (default: GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL, then git config user.name/user.email)")
	fs.StringVar(&f.message, "message", "", "commit message (default: one naming the change)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the change as a diff and write nothing")
	fs.StringVar(&f.format, "format", "text", "problem output format: text or json")
	return f
}

// parseArgs parses flags placed anywhere among the positional arguments
// and returns the positional ones.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if i := len(args) - len(rest); i > 0 && args[i-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// workspace is an apps repository loaded for editing.
type workspace struct {
	root   string // as shown to the user
	abs    string
	loader *spec.Loader
	files  map[string][]byte // platform, spec and template files by slash path
	repo   *spec.Repo
	ps     spec.Problems
}

func openWorkspace(dir string) (*workspace, error) {
	root, err := cli.FindRoot(dir)
	if err != nil {
		return nil, &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	files, err := readSpecFiles(abs)
	if err != nil {
		return nil, &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	loader, err := spec.NewLoader(exportCatalog(), root)
	if err != nil {
		return nil, err
	}
	w := &workspace{root: root, abs: abs, loader: loader, files: files}
	w.repo, w.ps = loader.LoadFiles(files)
	return w, nil
}

// readSpecFiles reads what the spec loader reads: the platform file, every
// app spec under apps/ and every template under templates/.
func readSpecFiles(abs string) (map[string][]byte, error) {
	files := map[string][]byte{}
	fsys := os.DirFS(abs)
	for _, n := range spec.PlatformFileNames {
		if b, err := fs.ReadFile(fsys, n); err == nil {
			files[n] = b
		}
	}
	err := fs.WalkDir(fsys, "apps", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == "apps" {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != "apps" {
			return fs.SkipDir
		}
		if !d.IsDir() && slices.Contains(spec.SpecFileNames, d.Name()) {
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			files[p] = b
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	tdirs, err := fs.ReadDir(fsys, template.Dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range tdirs {
		if !e.IsDir() {
			continue
		}
		for _, n := range template.FileNames {
			p := path.Join(template.Dir, e.Name(), n)
			if b, err := fs.ReadFile(fsys, p); err == nil {
				files[p] = b
			}
		}
	}
	return files, nil
}

// display is a repository path as problems show it.
func (w *workspace) display(p string) string {
	if w.root == "" || w.root == "." {
		return p
	}
	return path.Join(filepath.ToSlash(w.root), p)
}

// openApp opens the apps repository at dir and finds the app addr names.
func openApp(dir, addr string) (*workspace, *spec.LoadedApp, error) {
	w, err := openWorkspace(dir)
	if err != nil {
		return nil, nil, err
	}
	a, err := w.findApp(addr)
	if err != nil {
		return nil, nil, err
	}
	return w, a, nil
}

// findApp resolves APP, PROJECT/APP or CLUSTER/PROJECT/APP.
func (w *workspace) findApp(addr string) (*spec.LoadedApp, error) {
	parts := strings.Split(addr, "/")
	if len(parts) > 3 || slices.Contains(parts, "") {
		return nil, cli.Usagef("%q is not an app: write APP, PROJECT/APP or CLUSTER/PROJECT/APP", addr)
	}
	var found []*spec.LoadedApp
	for _, a := range w.repo.Apps {
		ok := false
		switch len(parts) {
		case 1:
			ok = a.Spec.Name == parts[0]
		case 2:
			ok = a.Project == parts[0] && a.Spec.Name == parts[1]
		case 3:
			ok = a.Cluster == parts[0] && a.Project == parts[1] && a.Spec.Name == parts[2]
		}
		if ok {
			found = append(found, a)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		var names []string
		for _, a := range w.repo.Apps {
			names = append(names, a.Project+"/"+a.Spec.Name)
		}
		msg := fmt.Sprintf("no app %q in %s", addr, w.root)
		if sug := closest(parts[len(parts)-1], w.repo.Apps); sug != "" {
			msg += fmt.Sprintf("; did you mean %q?", sug)
		} else if len(names) == 0 {
			msg += " (it has no apps)"
		}
		return nil, &cli.ExitError{Code: cli.ExitFailed, Err: errors.New(msg)}
	}
	keys := make([]string, len(found))
	for i, a := range found {
		keys[i] = a.Key()
	}
	return nil, cli.Usagef("%q names %d apps (%s); write PROJECT/APP or CLUSTER/PROJECT/APP", addr, len(found), strings.Join(keys, ", "))
}

func closest(name string, apps []*spec.LoadedApp) string {
	best, bestD := "", len(name)/2+1
	for _, a := range apps {
		if d := hint.Distance(name, a.Spec.Name); d < bestD {
			best, bestD = a.Project+"/"+a.Spec.Name, d
		}
	}
	return best
}

// appName is project/name, as commit messages and output name apps.
func appName(a *spec.LoadedApp) string { return a.Project + "/" + a.Spec.Name }

// change is an edit of the apps repository.
type change struct {
	// write holds new file contents by slash path.
	write map[string][]byte
	// remove lists folders or files removed before writing.
	remove []string
	// subject and body of the commit message.
	subject, body string
	// done is printed once the change is written.
	done string
}

func (c *change) message() string {
	if c.body == "" {
		return c.subject
	}
	return c.subject + "\n\n" + c.body
}

func under(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }

// apply validates the change and writes or commits it.
func (w *workspace) apply(ctx context.Context, ch *change, f *editFlags, io stdio) error {
	next := maps.Clone(w.files)
	for p := range next {
		for _, r := range ch.remove {
			if under(p, r) {
				delete(next, p)
			}
		}
	}
	touched := map[string]bool{}
	for p, b := range ch.write {
		if _, loaded := w.files[p]; loaded || isLoaded(p) {
			next[p] = b
		}
		touched[w.display(p)] = true
	}
	_, ps := w.loader.LoadFiles(next)
	before := map[string]bool{}
	for _, p := range w.ps {
		before[p.Error()] = true
	}
	var bad spec.Problems
	for _, p := range ps {
		if p.Severity != spec.SeverityWarning && (touched[p.File] || !before[p.Error()]) {
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		rep := &cli.Reporter{Format: f.format, Out: io.err, Getenv: io.getenv}
		if err := rep.Report(bad, nil); err != nil {
			return err
		}
		fmt.Fprintf(io.err, "render: the change would make the specs invalid; nothing was written\n")
		return cli.Failed()
	}
	if f.dryRun {
		fmt.Fprint(io.out, w.diff(ch))
		return nil
	}
	if f.commit {
		return w.commit(ctx, ch, f, io)
	}
	if err := w.writeFiles(ch); err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	fmt.Fprintln(io.out, ch.done)
	return nil
}

// isLoaded reports whether the spec loader reads the file at p.
func isLoaded(p string) bool {
	base := path.Base(p)
	switch {
	case strings.HasPrefix(p, "apps/"):
		return slices.Contains(spec.SpecFileNames, base)
	case strings.HasPrefix(p, template.Dir+"/"):
		return slices.Contains(template.FileNames, base) && strings.Count(p, "/") == 2
	}
	return slices.Contains(spec.PlatformFileNames, p)
}

// diff is the change as a unified diff against the files on disk.
func (w *workspace) diff(ch *change) string {
	var changes []fleet.Change
	for _, r := range ch.remove {
		_ = filepath.WalkDir(filepath.Join(w.abs, filepath.FromSlash(r)), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(w.abs, p)
			rel = filepath.ToSlash(rel)
			if _, rewritten := ch.write[rel]; rewritten {
				return nil
			}
			old, _ := os.ReadFile(p)
			changes = append(changes, fleet.Change{Path: rel, Op: fleet.Delete, Old: old})
			return nil
		})
	}
	for _, p := range slices.Sorted(maps.Keys(ch.write)) {
		old, err := os.ReadFile(filepath.Join(w.abs, filepath.FromSlash(p)))
		switch {
		case err != nil:
			changes = append(changes, fleet.Change{Path: p, Op: fleet.Add, New: ch.write[p]})
		case !bytes.Equal(old, ch.write[p]):
			changes = append(changes, fleet.Change{Path: p, Op: fleet.Update, Old: old, New: ch.write[p]})
		}
	}
	slices.SortFunc(changes, func(a, b fleet.Change) int { return strings.Compare(a.Path, b.Path) })
	return fleet.Diff(changes, "")
}

func (w *workspace) writeFiles(ch *change) error {
	for _, r := range ch.remove {
		if err := os.RemoveAll(filepath.Join(w.abs, filepath.FromSlash(r))); err != nil {
			return err
		}
	}
	for _, p := range slices.Sorted(maps.Keys(ch.write)) {
		if err := writeAtomic(filepath.Join(w.abs, filepath.FromSlash(p)), ch.write[p]); err != nil {
			return err
		}
	}
	return nil
}

// writeAtomic writes b to name through a temporary file and a rename.
func writeAtomic(name string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(name); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// openGit opens the Git work tree holding the apps repository; rel is the
// apps repository's slash path inside it.
func (w *workspace) openGit(io stdio) (g *gitrepo.Repo, top, rel string, err error) {
	top, rel, ok := gitTop(w.abs)
	if !ok {
		return nil, "", "", cli.Usagef("%s is not in a Git work tree", w.root)
	}
	var opts []gitrepo.Option
	if now := sourceDate(io); now != nil {
		opts = append(opts, gitrepo.WithClock(now))
	}
	g, err = gitrepo.Open(top, opts...)
	if err != nil {
		return nil, "", "", &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	if rel == "." {
		rel = ""
	}
	return g, top, rel, nil
}

// sourceDate is the clock of SOURCE_DATE_EPOCH, when it is set.
func sourceDate(io stdio) func() time.Time {
	if io.getenv == nil {
		return nil
	}
	s := io.getenv("SOURCE_DATE_EPOCH")
	n, err := strconv.ParseInt(s, 10, 64)
	if s == "" || err != nil {
		return nil
	}
	return func() time.Time { return time.Unix(n, 0).UTC() }
}

func (w *workspace) commit(ctx context.Context, ch *change, f *editFlags, io stdio) error {
	g, top, rel, err := w.openGit(io)
	if err != nil {
		return err
	}
	defer g.Close()
	author, err := commitAuthor(f.author, top, io)
	if err != nil {
		return err
	}
	gc := gitrepo.Change{Files: map[string][]byte{}, Author: author, Message: ch.message()}
	if f.message != "" {
		gc.Message = f.message
	}
	for _, r := range ch.remove {
		gc.Prefixes = append(gc.Prefixes, path.Join(rel, r))
	}
	for p, b := range ch.write {
		gc.Prefixes = append(gc.Prefixes, path.Join(rel, p))
		gc.Files[path.Join(rel, p)] = b
	}
	slices.Sort(gc.Prefixes)
	hash, _, err := g.Commit(ctx, gc)
	switch {
	case errors.Is(err, gitrepo.ErrNoChange):
		if err := w.writeFiles(ch); err != nil {
			return &cli.ExitError{Code: cli.ExitUsage, Err: err}
		}
		fmt.Fprintln(io.out, ch.done)
		fmt.Fprintln(io.err, "HEAD already holds this change; nothing was committed")
		return nil
	case err != nil:
		return &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("committing: %w", err)}
	}
	// Files Git did not track (and so did not delete) go too.
	for _, r := range ch.remove {
		if _, rewritten := ch.write[r]; !rewritten && !anyUnder(ch.write, r) {
			if err := os.RemoveAll(filepath.Join(w.abs, filepath.FromSlash(r))); err != nil {
				return &cli.ExitError{Code: cli.ExitUsage, Err: err}
			}
		}
	}
	fmt.Fprintln(io.out, ch.done)
	subject, _, _ := strings.Cut(gc.Message, "\n")
	fmt.Fprintf(io.out, "committed %s %s\n", hash[:min(len(hash), 12)], subject)
	return nil
}

func anyUnder(files map[string][]byte, dir string) bool {
	for p := range files {
		if under(p, dir) {
			return true
		}
	}
	return false
}

// The author of commits made in GitHub Actions when nothing else names
// one: the identity GitHub documents for the Actions bot.
const (
	botName  = "github-actions[bot]"
	botEmail = "41898282+github-actions[bot]@users.noreply.github.com"
)

// commitAuthor takes the author from --author, then the GIT_AUTHOR_*
// variables, then Git's configuration, then (in GitHub Actions) the
// Actions bot.
func commitAuthor(flagValue, top string, io stdio) (gitrepo.Signature, error) {
	if flagValue != "" {
		name, rest, ok := strings.Cut(flagValue, "<")
		email, _, ok2 := strings.Cut(rest, ">")
		name, email = strings.TrimSpace(name), strings.TrimSpace(email)
		if !ok || !ok2 || name == "" || email == "" {
			return gitrepo.Signature{}, cli.Usagef("--author must be 'Name <email>', got %q", flagValue)
		}
		return gitrepo.Signature{Name: name, Email: email}, nil
	}
	getenv := io.getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if n, e := getenv("GIT_AUTHOR_NAME"), getenv("GIT_AUTHOR_EMAIL"); n != "" && e != "" {
		return gitrepo.Signature{Name: n, Email: e}, nil
	}
	if g, err := gitrepo.Open(top); err == nil {
		name, email := g.User()
		g.Close()
		if name != "" && email != "" {
			return gitrepo.Signature{Name: name, Email: email}, nil
		}
	}
	if getenv("GITHUB_ACTIONS") == "true" {
		return gitrepo.Signature{Name: botName, Email: botEmail}, nil
	}
	return gitrepo.Signature{}, cli.Usagef("no commit author: pass --author 'Name <email>', or set git config user.name and user.email")
}

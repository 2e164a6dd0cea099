package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Change is a validated edit of an apps repository. An empty change (no
// files to write or remove) means there is nothing to do; Done says why.
type Change struct {
	// Root is the apps repository as messages show it; Dir is its
	// absolute path.
	Root, Dir string
	// Write holds new file contents by slash path under Dir.
	Write map[string][]byte
	// Remove lists folders or files removed before writing.
	Remove []string
	// Subject and Body of the commit message.
	Subject, Body string
	// Done says what the change did, once written (or, for an empty
	// change, why there is nothing to do).
	Done string
}

// Empty reports whether the change writes and removes nothing.
func (c *Change) Empty() bool { return len(c.Write) == 0 && len(c.Remove) == 0 }

// Message is the commit message: the subject, a blank line and the body.
func (c *Change) Message() string {
	if c.Body == "" {
		return c.Subject
	}
	return c.Subject + "\n\n" + c.Body
}

// nothing is an empty change whose Done says why.
func nothing(format string, args ...any) *Change {
	return &Change{Done: fmt.Sprintf(format, args...)}
}

// done validates ch and returns it.
func (w *workspace) done(ch *Change) (*Change, error) {
	if err := w.check(ch); err != nil {
		return nil, err
	}
	return ch, nil
}

// check validates ch against the workspace: the specs as they would be
// after it must hold no error that is in a file it writes or that is new.
func (w *workspace) check(ch *Change) error {
	ch.Root, ch.Dir = w.root, w.abs
	next := maps.Clone(w.files)
	for p := range next {
		for _, r := range ch.Remove {
			if under(p, r) {
				delete(next, p)
			}
		}
	}
	touched := map[string]bool{}
	for p, b := range ch.Write {
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
	var bad load.Problems
	for _, p := range ps {
		if p.Severity != diag.Warning && (touched[p.File] || !before[p.Error()]) {
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		return &InvalidError{Problems: bad}
	}
	return nil
}

// Diff is the change as a unified diff against the files on disk.
func (c *Change) Diff() string { return diffFiles(c.Dir, c.Write, c.Remove) }

func diffFiles(abs string, write map[string][]byte, remove []string) string {
	var changes []fleet.Change
	for _, r := range remove {
		_ = filepath.WalkDir(filepath.Join(abs, filepath.FromSlash(r)), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(abs, p)
			rel = filepath.ToSlash(rel)
			if _, rewritten := write[rel]; rewritten {
				return nil
			}
			old, _ := os.ReadFile(p)
			changes = append(changes, fleet.Change{Path: rel, Op: fleet.Delete, Old: old})
			return nil
		})
	}
	for _, p := range slices.Sorted(maps.Keys(write)) {
		old, err := os.ReadFile(filepath.Join(abs, filepath.FromSlash(p)))
		switch {
		case err != nil:
			changes = append(changes, fleet.Change{Path: p, Op: fleet.Add, New: write[p]})
		case !bytes.Equal(old, write[p]):
			changes = append(changes, fleet.Change{Path: p, Op: fleet.Update, Old: old, New: write[p]})
		}
	}
	slices.SortFunc(changes, func(a, b fleet.Change) int { return strings.Compare(a.Path, b.Path) })
	return fleet.Diff(changes, "")
}

// ApplyOptions say how Apply writes a change.
type ApplyOptions struct {
	// Commit commits the change with Git; else it is left in the work tree.
	Commit bool
	// Author of the commit as "Name <email>"; empty takes GIT_AUTHOR_NAME
	// and GIT_AUTHOR_EMAIL, then Git's configuration, then (in GitHub
	// Actions) the Actions bot.
	Author string
	// Message, when set, replaces the change's commit message.
	Message string
}

// Applied is what Apply did.
type Applied struct {
	// Commit is the hash of the commit made; empty when none was.
	Commit string
	// Subject is the first line of the commit's message.
	Subject string
	// AlreadyCommitted is set when HEAD already held the change: the
	// files were written and nothing was committed.
	AlreadyCommitted bool
}

var (
	// ErrNoAuthor is returned by Apply when no commit author is known.
	ErrNoAuthor = errors.New("no commit author")
	// ErrBadAuthor is returned by Apply for an author not written as
	// "Name <email>".
	ErrBadAuthor = errors.New("the author must be 'Name <email>'")
)

// Apply writes ch into the work tree or, with a.Commit, commits it on the
// current branch of the Git work tree that holds the apps repository. An
// empty change does nothing.
func Apply(ctx context.Context, o Options, ch *Change, a ApplyOptions) (Applied, error) {
	if ch.Empty() {
		return Applied{}, nil
	}
	if !a.Commit {
		return Applied{}, gitrepo.WriteFiles(ch.Dir, ch.Write, ch.Remove)
	}
	g, rel, err := openGit(o, ch.Root, ch.Dir)
	if err != nil {
		return Applied{}, err
	}
	defer g.Close()
	author, err := commitAuthor(o, a.Author, g)
	if err != nil {
		return Applied{}, err
	}
	gc := gitrepo.Change{Files: map[string][]byte{}, Author: author, Message: ch.Message()}
	if a.Message != "" {
		gc.Message = a.Message
	}
	for _, r := range ch.Remove {
		gc.Prefixes = append(gc.Prefixes, path.Join(rel, r))
	}
	for p, b := range ch.Write {
		gc.Prefixes = append(gc.Prefixes, path.Join(rel, p))
		gc.Files[path.Join(rel, p)] = b
	}
	slices.Sort(gc.Prefixes)
	hash, _, err := g.Commit(ctx, gc)
	switch {
	case errors.Is(err, gitrepo.ErrNoChange):
		return Applied{AlreadyCommitted: true}, gitrepo.WriteFiles(ch.Dir, ch.Write, ch.Remove)
	case err != nil:
		return Applied{}, fmt.Errorf("committing: %w", err)
	}
	// Files Git did not track (and so did not delete) go too.
	var untracked []string
	for _, r := range ch.Remove {
		if _, rewritten := ch.Write[r]; !rewritten && !anyUnder(ch.Write, r) {
			untracked = append(untracked, r)
		}
	}
	subject, _, _ := strings.Cut(gc.Message, "\n")
	return Applied{Commit: hash, Subject: subject}, gitrepo.WriteFiles(ch.Dir, nil, untracked)
}

func anyUnder(files map[string][]byte, dir string) bool {
	for p := range files {
		if under(p, dir) {
			return true
		}
	}
	return false
}

// openGit opens the Git work tree holding the apps repository at abs
// (shown as root); rel is the apps repository's slash path inside it.
func openGit(o Options, root, abs string) (g *gitrepo.Repo, rel string, err error) {
	top, rel, ok := gitrepo.FindTop(abs)
	if !ok {
		return nil, "", fmt.Errorf("%s is not in a Git work tree", root)
	}
	g, err = gitrepo.Open(top, gitrepo.WithClock(o.now()), gitrepo.WithLogger(o.Logger))
	if err != nil {
		return nil, "", err
	}
	if rel == "." {
		rel = ""
	}
	return g, rel, nil
}

// The author of commits made in GitHub Actions when nothing else names
// one: the identity GitHub documents for the Actions bot.
const (
	botName  = "github-actions[bot]"
	botEmail = "41898282+github-actions[bot]@users.noreply.github.com"
)

// commitAuthor takes the author given, then the GIT_AUTHOR_* variables,
// then Git's configuration, then (in GitHub Actions) the Actions bot.
func commitAuthor(o Options, given string, g *gitrepo.Repo) (gitrepo.Signature, error) {
	if given != "" {
		name, rest, ok := strings.Cut(given, "<")
		email, _, ok2 := strings.Cut(rest, ">")
		name, email = strings.TrimSpace(name), strings.TrimSpace(email)
		if !ok || !ok2 || name == "" || email == "" {
			return gitrepo.Signature{}, fmt.Errorf("%w, got %q", ErrBadAuthor, given)
		}
		return gitrepo.Signature{Name: name, Email: email}, nil
	}
	if n, e := o.getenv("GIT_AUTHOR_NAME"), o.getenv("GIT_AUTHOR_EMAIL"); n != "" && e != "" {
		return gitrepo.Signature{Name: n, Email: e}, nil
	}
	if sig, ok := g.ConfigUser(); ok {
		return sig, nil
	}
	if o.getenv("GITHUB_ACTIONS") == "true" {
		return gitrepo.Signature{Name: botName, Email: botEmail}, nil
	}
	return gitrepo.Signature{}, ErrNoAuthor
}

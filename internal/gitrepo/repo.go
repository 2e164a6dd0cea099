package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// RemoteName is the name of the remote that Sync configures.
const RemoteName = "origin"

var (
	// ErrNoChange is returned by Commit when the desired files are already
	// in the base commit: no commit is made.
	ErrNoChange = errors.New("no change")
	// ErrRefNotFound is returned when a ref names no commit.
	ErrRefNotFound = errors.New("ref not found")
	// ErrBranchNotFound is returned when a base branch is missing on the
	// remote (and the remote is not empty).
	ErrBranchNotFound = errors.New("branch not found on remote")
	// ErrTooManyAttempts is returned by Land when every attempt lost a
	// race with another writer.
	ErrTooManyAttempts = errors.New("push kept losing races with other writers")
)

// Remote is where a repository is cloned from and pushed to.
type Remote struct {
	// URL is an http(s) URL or a local path (file://... or a plain path).
	URL string
	// Auth authenticates to an http(s) remote; nil for none. See TokenAuth.
	Auth transport.AuthMethod
}

// TokenAuth is HTTP basic authentication with a token as the password, the
// way GitHub accepts installation and personal access tokens over HTTPS.
// The token is never logged (the auth method's String masks it).
func TokenAuth(token string) transport.AuthMethod {
	return &githttp.BasicAuth{Username: "x-access-token", Password: token}
}

// Option configures a Repo.
type Option func(*Repo)

// WithLogger sends progress logs to l (the default discards them).
func WithLogger(l *slog.Logger) Option {
	return func(r *Repo) {
		if l != nil {
			r.log = l
		}
	}
}

// WithClock sets the clock that dates commits whose signatures carry no
// time (the default is time.Now).
func WithClock(now func() time.Time) Option {
	return func(r *Repo) {
		if now != nil {
			r.now = now
		}
	}
}

// Bare makes Sync clone without a work tree (a bare repository): Land
// then builds and pushes commits from git objects alone and writes no
// files. It is the fast choice where every run starts from a fresh clone,
// as in CI. Open detects bare repositories by itself.
func Bare() Option {
	return func(r *Repo) { r.bare = true }
}

// WithAuth sets the credentials Fetch and Land use for the remote of a
// repository opened with Open (Sync takes them from its Remote).
func WithAuth(auth transport.AuthMethod) Option {
	return func(r *Repo) { r.auth = auth }
}

// WithProgress sends the remote's progress messages of clones and fetches
// ("Counting objects: 40% (4/10)\r"…) to w; without it the remote is
// asked to send none.
func WithProgress(w io.Writer) Option {
	return func(r *Repo) { r.progress = w }
}

// Repo is a git repository on disk with a work tree. It is not safe for
// concurrent use.
type Repo struct {
	dir    string
	repo   *git.Repository
	closer io.Closer
	bare   bool // no work tree: commits are made from objects only
	auth   transport.AuthMethod
	log    *slog.Logger
	now    func() time.Time

	progress io.Writer // the remote's progress messages, or nil

	// beforePush, when set, runs before every push attempt (tests use it
	// to make another writer win a race deterministically).
	beforePush func(attempt int)
}

func newRepo(dir string, opts []Option) *Repo {
	r := &Repo{
		dir: dir,
		log: slog.New(slog.DiscardHandler),
		now: time.Now,
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Open opens the repository whose work tree is dir (or the bare repository
// dir). Close it when done.
func Open(dir string, opts ...Option) (*Repo, error) {
	r := newRepo(dir, opts)
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

// Sync makes dir a clone of remote with branch checked out at the remote's
// head: it clones into dir when dir is missing or empty, and otherwise
// reuses the clone there, fetching and hard-resetting the work tree to the
// remote branch. Close the Repo when done. An empty remote (no commits yet) gives an empty
// repository whose first Land makes the root commit. When branch is empty
// the work tree is left as it is after the fetch.
func Sync(ctx context.Context, dir string, remote Remote, branch string, opts ...Option) (*Repo, error) {
	r := newRepo(dir, opts)
	r.auth = remote.Auth
	empty, err := isEmptyDir(dir)
	if err != nil {
		return nil, err
	}
	if empty {
		r.log.Info("cloning", "remote", redactURL(remote.URL), "dir", dir)
		_, err := git.PlainCloneContext(ctx, dir, r.bare, &git.CloneOptions{
			URL:        remote.URL,
			Auth:       remote.Auth,
			RemoteName: RemoteName,
			NoCheckout: true,
			Progress:   r.progress,
		})
		fetch := false
		switch {
		case errors.Is(err, transport.ErrEmptyRemoteRepository):
			if err := initEmpty(dir, remote.URL, r.bare); err != nil {
				return nil, err
			}
		case errors.Is(err, plumbing.ErrReferenceNotFound):
			// The remote's HEAD names a branch it does not have (a bare
			// repository made with another default branch than the one
			// pushed): fetch its branches instead of cloning its HEAD.
			if err := emptyDir(dir); err != nil {
				return nil, err
			}
			if err := initEmpty(dir, remote.URL, r.bare); err != nil {
				return nil, err
			}
			fetch = true
		case err != nil:
			return nil, fmt.Errorf("cloning %s: %w", redactURL(remote.URL), err)
		}
		if err := r.open(); err != nil {
			return nil, err
		}
		if fetch {
			if err := r.Fetch(ctx); err != nil {
				r.Close()
				return nil, err
			}
		}
	} else {
		if err := r.open(); err != nil {
			return nil, err
		}
		if err := r.setRemoteURL(remote.URL); err != nil {
			r.Close()
			return nil, err
		}
		if err := r.Fetch(ctx); err != nil {
			r.Close()
			return nil, err
		}
	}
	if branch == "" {
		return r, nil
	}
	if err := r.checkoutRemote(branch); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// checkoutRemote checks out branch at the remote's head; on an empty
// remote it leaves the branch unborn.
func (r *Repo) checkoutRemote(branch string) error {
	head, err := r.remoteHead(branch)
	if err != nil {
		return err
	}
	if head.IsZero() {
		if !r.remoteIsEmpty() {
			return fmt.Errorf("%w: %s", ErrBranchNotFound, branch)
		}
		if err := r.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(branch))); err != nil {
			return fmt.Errorf("pointing HEAD at %s: %w", branch, err)
		}
		return nil
	}
	return r.checkout(branch, head)
}

// emptyDir removes what is in dir, keeping dir; a missing dir is empty.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func initEmpty(dir, remoteURL string, bare bool) error {
	repo, err := git.PlainInit(dir, bare)
	if err != nil {
		return fmt.Errorf("initialising %s: %w", dir, err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{
		Name:  RemoteName,
		URLs:  []string{remoteURL},
		Fetch: []config.RefSpec{fetchSpec},
	}); err != nil {
		return fmt.Errorf("adding remote to %s: %w", dir, err)
	}
	return nil
}

// maxOpenPacks is how many pack files a Repo keeps open between reads;
// reopening a pack for every object read dominates history walks.
const maxOpenPacks = 16

// open opens the repository at r.dir, keeping pack files open between
// reads. A work tree whose .git is a file (a linked work tree) is opened
// the plain way.
func (r *Repo) open() error {
	dot := filepath.Join(r.dir, git.GitDirName)
	fi, err := os.Stat(dot)
	var wt billy.Filesystem
	switch {
	case err == nil && fi.IsDir():
		wt = osfs.New(r.dir)
	case err == nil:
		repo, err := git.PlainOpen(r.dir)
		if err != nil {
			return fmt.Errorf("opening git repository %s: %w", r.dir, err)
		}
		r.repo = repo
		return nil
	case errors.Is(err, os.ErrNotExist):
		dot = r.dir // a bare repository
		if _, err := os.Stat(filepath.Join(dot, "objects")); err != nil {
			return fmt.Errorf("opening git repository %s: %w", r.dir, git.ErrRepositoryNotExists)
		}
	default:
		return fmt.Errorf("opening git repository %s: %w", r.dir, err)
	}
	r.bare = wt == nil
	st := filesystem.NewStorageWithOptions(osfs.New(dot), cache.NewObjectLRUDefault(),
		filesystem.Options{MaxOpenDescriptors: maxOpenPacks})
	repo, err := git.Open(st, wt)
	if err != nil {
		st.Close()
		return fmt.Errorf("opening git repository %s: %w", r.dir, err)
	}
	r.repo, r.closer = repo, st
	return nil
}

// Close releases the files the repository keeps open.
func (r *Repo) Close() error {
	if r.closer == nil {
		return nil
	}
	c := r.closer
	r.closer = nil
	return c.Close()
}

const fetchSpec = config.RefSpec("+refs/heads/*:refs/remotes/" + RemoteName + "/*")

// Dir is the work tree of the repository.
func (r *Repo) Dir() string { return r.dir }

// Fetch updates the remote-tracking branches from the remote, dropping
// those whose branch was deleted there. With refspecs it fetches those
// instead, for example "+refs/pull/7/head:refs/remotes/origin/pr/7" for the
// head of a pull request, and prunes nothing.
func (r *Repo) Fetch(ctx context.Context, refspecs ...string) error {
	opts := &git.FetchOptions{
		RemoteName: RemoteName,
		RefSpecs:   []config.RefSpec{fetchSpec},
		Auth:       r.auth,
		Prune:      true,
		Force:      true,
		Progress:   r.progress,
	}
	if len(refspecs) > 0 {
		opts.RefSpecs, opts.Prune = nil, false
		for _, s := range refspecs {
			opts.RefSpecs = append(opts.RefSpecs, config.RefSpec(s))
		}
	}
	err := r.repo.FetchContext(ctx, opts)
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate), errors.Is(err, transport.ErrEmptyRemoteRepository):
		return nil
	default:
		return fmt.Errorf("fetching %s: %w", RemoteName, err)
	}
}

func (r *Repo) setRemoteURL(u string) error {
	cfg, err := r.repo.Config()
	if err != nil {
		return fmt.Errorf("reading git config: %w", err)
	}
	rc, ok := cfg.Remotes[RemoteName]
	if ok && len(rc.URLs) == 1 && rc.URLs[0] == u {
		return nil
	}
	cfg.Remotes[RemoteName] = &config.RemoteConfig{
		Name:  RemoteName,
		URLs:  []string{u},
		Fetch: []config.RefSpec{fetchSpec},
	}
	if err := r.repo.SetConfig(cfg); err != nil {
		return fmt.Errorf("setting remote URL: %w", err)
	}
	return nil
}

// remoteHead is the commit of the remote-tracking branch, or the zero hash
// when the remote has no such branch.
func (r *Repo) remoteHead(branch string) (plumbing.Hash, error) {
	ref, err := r.repo.Reference(plumbing.NewRemoteReferenceName(RemoteName, branch), true)
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		return plumbing.ZeroHash, nil
	case err != nil:
		return plumbing.ZeroHash, fmt.Errorf("reading %s/%s: %w", RemoteName, branch, err)
	}
	return ref.Hash(), nil
}

// remoteIsEmpty reports whether the remote has no branches at all.
func (r *Repo) remoteIsEmpty() bool {
	iter, err := r.repo.References()
	if err != nil {
		return false
	}
	defer iter.Close()
	prefix := "refs/remotes/" + RemoteName + "/"
	empty := true
	_ = iter.ForEach(func(ref *plumbing.Reference) error {
		if strings.HasPrefix(ref.Name().String(), prefix) {
			empty = false
			return io.EOF
		}
		return nil
	})
	return empty
}

// checkout points HEAD at the local branch, sets the branch to commit and
// hard-resets the index and work tree to it.
// When the work tree is clean, only the files that differ between HEAD
// and commit are rewritten.
func (r *Repo) checkout(branch string, commit plumbing.Hash) error {
	name := plumbing.NewBranchReferenceName(branch)
	if r.bare {
		return r.setHead(name, commit)
	}
	moved, err := r.fastMove(commit)
	if err != nil {
		return err
	}
	if moved {
		r.log.Debug("work tree moved in place", "commit", commit.String())
		return r.setHead(name, commit)
	}
	r.log.Debug("work tree reset", "commit", commit.String())
	if err := r.setHead(name, commit); err != nil {
		return err
	}
	wt, err := r.repo.Worktree()
	if err != nil {
		return fmt.Errorf("opening work tree: %w", err)
	}
	if err := wt.Reset(&git.ResetOptions{Commit: commit, Mode: git.HardReset}); err != nil {
		return fmt.Errorf("resetting work tree to %s: %w", commit, err)
	}
	return nil
}

// setHead sets the branch name to commit and points HEAD at it.
func (r *Repo) setHead(name plumbing.ReferenceName, commit plumbing.Hash) error {
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference(name, commit)); err != nil {
		return fmt.Errorf("setting %s: %w", name.Short(), err)
	}
	if err := r.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, name)); err != nil {
		return fmt.Errorf("pointing HEAD at %s: %w", name.Short(), err)
	}
	return nil
}

// Resolve returns the commit hash that ref names: a commit hash (full or
// abbreviated), a branch, a tag (annotated tags are peeled), a remote branch
// (origin/main) or any revision go-git understands (HEAD~2). A branch that
// exists only on the remote resolves to its remote-tracking branch.
func (r *Repo) Resolve(ref string) (string, error) {
	c, err := r.resolve(ref)
	if err != nil {
		return "", err
	}
	return c.Hash.String(), nil
}

func (r *Repo) resolve(ref string) (*object.Commit, error) {
	candidates := []string{ref, "refs/remotes/" + RemoteName + "/" + ref}
	for _, cand := range candidates {
		h, err := r.repo.ResolveRevision(plumbing.Revision(cand))
		if err != nil {
			continue
		}
		c, err := r.peel(*h)
		if err != nil {
			return nil, fmt.Errorf("resolving %s: %w", ref, err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrRefNotFound, ref)
}

// peel follows annotated tags to the commit they name.
func (r *Repo) peel(h plumbing.Hash) (*object.Commit, error) {
	for range 10 {
		obj, err := r.repo.Object(plumbing.AnyObject, h)
		if err != nil {
			return nil, err
		}
		switch o := obj.(type) {
		case *object.Commit:
			return o, nil
		case *object.Tag:
			h = o.Target
		default:
			return nil, fmt.Errorf("%s is a %s, not a commit", h, obj.Type())
		}
	}
	return nil, fmt.Errorf("%s: too many nested tags", h)
}

func isEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("opening %s: %w", dir, err)
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", dir, err)
	}
	return false, nil
}

// redactURL hides any password in a URL so that it can be logged.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User == nil {
		return s
	}
	return u.Redacted()
}

// MergeBase returns the best common ancestor of the commits a and b name
// (the first, by go-git's order, when there are several): where a branch
// b left a.
func (r *Repo) MergeBase(a, b string) (string, error) {
	ca, err := r.resolve(a)
	if err != nil {
		return "", err
	}
	cb, err := r.resolve(b)
	if err != nil {
		return "", err
	}
	bases, err := ca.MergeBase(cb)
	if err != nil {
		return "", fmt.Errorf("the merge base of %s and %s: %w", a, b, err)
	}
	if len(bases) == 0 {
		return "", fmt.Errorf("%s and %s have no common ancestor", a, b)
	}
	return bases[0].Hash.String(), nil
}

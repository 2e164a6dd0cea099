// Package gitrepo is the git plumbing that lands fleet changes, built on
// go-git: clone or refresh a work tree from a remote (Sync), read the files
// of any commit into memory without touching the work tree (Tree), answer
// "which commit last changed this path" for thousands of paths in one
// history walk (LastCommitFor), list the commits that touched a path
// (History), and write a desired set of files under some prefixes as one
// commit (Commit) that is pushed to a branch directly or to the head branch
// of a pull request, retrying when another writer pushes first (Land), or
// only compared with a branch, changing nothing (Compare).
//
// Writing never rebuilds the work tree: the desired files are hashed in
// memory and compared with the base commit subtree by subtree, so only
// subtrees that differ are read; only files whose bytes differ are
// written, files that are gone are deleted, and the index is updated in one
// write. No commit is made when nothing changed, so reruns are idempotent.
// Moving a clean work tree to another commit rewrites only the files that
// differ; a work tree edited behind the package's back gets a full reset.
// With Bare there is no work tree at all, which suits CI, where every run
// clones afresh.
//
// The git CLI is not needed at run time; the tests use it (through
// gittest) as an independent check.
package gitrepo

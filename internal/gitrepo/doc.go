// Package gitrepo is the git plumbing that lands fleet changes, built on
// go-git: clone or refresh a work tree from a remote, read the files of any
// commit into memory without touching the work tree, answer "which commit
// last changed this path" for thousands of paths in one history walk, and
// write a desired set of files under some prefixes as one commit that is
// pushed to a branch directly or to the head branch of a pull request,
// retrying when another writer pushes first.
//
// Writing never rebuilds the work tree: the new commit's trees are built
// from the base commit's objects, only files whose bytes differ are
// written, files that are gone are deleted, and the index is updated in one
// write. No commit is made when nothing changed, so reruns are idempotent.
package gitrepo

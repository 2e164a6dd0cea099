// Package sink lands a rendered fleet, the way ko's publishers put images
// somewhere: every destination is a Sink, and a cache wraps a Sink.
//
//   - Dir writes the fleet into a folder (package fleet does the writing).
//   - Indexed wraps a Dir with the fleet index, which tells from stat data
//     what is already in place and which apps need no generating again.
//   - Push commits the fleet to a branch of the fleet repository and pushes
//     it, or to the head branch of a pull request.
//   - PullRequest wraps a Push to that head branch and opens or updates the
//     branch's pull request on GitHub.
//
// New builds the sink a Config describes, filling in the fleet repository
// (platform.yaml, else the apps repository's origin), the GitHub repository
// and the fleet index file, and refusing a fleet that would land among the
// specs.
//
// Every sink can compare only (DryRun): it then tells what differs between
// the fleet and the folder, or the fleet repository's branch, and changes
// nothing anywhere.
package sink

import (
	"context"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/github"
)

// Sink lands a rendered fleet.
type Sink interface {
	// Land puts f in place, or with DryRun only compares; the result tells
	// what differed.
	Land(ctx context.Context, f *generate.Fleet) (Result, error)
}

// Reuser is a Sink that knows which apps' files are in place already: what
// generate.Options.Reuse asks.
type Reuser interface {
	Sink
	Reuse(app string, d generate.Digest) bool
}

// Result tells what a Sink did, or, comparing only, what it would do.
type Result struct {
	// Paths are the fleet files written and deleted (or that would be),
	// relative to the fleet root, sorted.
	Paths []string
	// Changes hold the content of each of those files before and after:
	// always from a Dir; from Push and PullRequest when comparing only.
	Changes []fleet.Change
	// Written, Deleted and Unchanged count the fleet's files.
	Written, Deleted, Unchanged int
	// Unmanaged lists files in the folders render manages that it did not
	// generate; they are left alone (Dir only).
	Unmanaged []string
	// Commit is the head of the pushed branch afterwards, and Message the
	// fleet commit's message (Push and PullRequest).
	Commit, Message string
	// PullRequest is the pull request that holds the change (PullRequest,
	// when there was a change).
	PullRequest *github.PullRequest
	// CacheErr is why the fleet index could not be saved (Indexed): it
	// costs the next run speed, not correctness.
	CacheErr error
}

// Empty reports whether nothing differed.
func (r Result) Empty() bool { return len(r.Paths) == 0 }

// ChangedApps are the apps (cluster/project/app) whose files differed.
func (r Result) ChangedApps() []string { return layout.AppsOf(r.Paths) }

// Managed returns the folders (or files) whose generated files s owns,
// for a caller to change them before Land: those of a Dir, an Indexed
// Dir, a Push or a PullRequest's Push; nil for another sink.
func Managed(s Sink) *[]string {
	switch s := s.(type) {
	case *Dir:
		return &s.Managed
	case *Indexed:
		return &s.dir.Managed
	case *Push:
		return &s.Managed
	case *PullRequest:
		return &s.Push.Managed
	}
	return nil
}

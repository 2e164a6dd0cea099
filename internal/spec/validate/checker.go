package validate

import (
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// checker makes the checks of the specs Load reads (Checks).
type checker struct {
	// Exports knows the addon types; nil accepts only generic addons.
	Exports load.ExportCatalog
}

// NewLoader compiles the schemas once and returns a loader that makes
// every check of the specs it reads; reuse it for many loads.
func NewLoader(exports load.ExportCatalog, prefix string) (*load.Loader, error) {
	return load.NewLoader(exports, prefix, &checker{Exports: exports})
}

// Platform checks the platform file's settings.
func (l *checker) Platform(p *spec.Platform, doc *load.Document, ps *load.Problems) {
	checkPlatform(p, doc, ps)
	checkEnvironments(p, doc, ps)
}

// App checks an app and each environment's copy of it.
func (l *checker) App(a *load.LoadedApp, plat *spec.Platform, ps *load.Problems) {
	l.checkApp(a, plat, ps)
}

// Replicas checks production_replicas on an environment's copy of a
// component.
func (l *checker) Replicas(a *load.LoadedApp, c *spec.Component, at load.Path, plat *spec.Platform, ps *load.Problems) {
	checkReplicasPolicy(a, c, at, plat, ps)
}

// Repo checks the apps together.
func (l *checker) Repo(repo *load.Repo, ps *load.Problems) { l.checkRepo(repo, ps) }

// countSet is how many of the fields whose setting is given are set: a
// choice of one takes exactly one.
func countSet(set ...bool) int {
	n := 0
	for _, s := range set {
		if s {
			n++
		}
	}
	return n
}

package spec

// checker makes the checks of the specs Load reads (Checks).
type checker struct {
	// Exports knows the addon types; nil accepts only generic addons.
	Exports ExportCatalog
}

// NewLoader compiles the schemas once and returns a loader that makes
// every check of the specs it reads; reuse it for many loads.
func NewLoader(exports ExportCatalog, prefix string) (*Loader, error) {
	return newLoader(exports, prefix, &checker{Exports: exports})
}

// Platform checks the platform file's settings.
func (l *checker) Platform(p *Platform, doc *Document, ps *Problems) {
	checkPlatform(p, doc, ps)
	checkEnvironments(p, doc, ps)
}

// App checks an app and each environment's copy of it.
func (l *checker) App(a *LoadedApp, plat *Platform, ps *Problems) { l.checkApp(a, plat, ps) }

// Replicas checks production_replicas on an environment's copy of a
// component.
func (l *checker) Replicas(a *LoadedApp, c *Component, at Path, plat *Platform, ps *Problems) {
	checkReplicasPolicy(a, c, at, plat, ps)
}

// Repo checks the apps together.
func (l *checker) Repo(repo *Repo, ps *Problems) { l.checkRepo(repo, ps) }

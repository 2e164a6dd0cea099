package webhook

import (
	"context"
	"errors"

	"github.com/fleetwright/fleetwright/internal/store"
)

// appInPage returns the app the app page shows: in the environment its
// query names or, naming none, outside environments, or else in the
// environment of its newest deployment. An environment that cannot name
// one is an app that does not exist.
func (s *Server) appInPage(ctx context.Context, project, name, env string) (store.App, error) {
	if env != "" && !validEnvironment(env) {
		return store.App{}, store.ErrNotFound
	}
	a, err := s.cfg.Store.App(ctx, project, name, env)
	if env != "" || !errors.Is(err, store.ErrNotFound) {
		return a, err
	}
	ds, derr := s.cfg.Store.Deployments(ctx, project, name, 1, 0)
	if derr != nil {
		return a, derr
	}
	if len(ds) == 0 || ds[0].Environment == "" {
		return a, err
	}
	return s.cfg.Store.App(ctx, project, name, ds[0].Environment)
}

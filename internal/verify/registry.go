package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/registry"
)

// RegistryCheck configures the checks of the artifacts (components' and
// projects') against their registry: each pinned artifact must be there, and where a digest
// does not match its folder, the registry's artifact is pulled to name the
// files that differ.
type RegistryCheck struct {
	// Client reaches the registries: credentials, transport and name
	// options (an OCIRepository with spec.insecure is reached over HTTP).
	Client *registry.Client
	// Concurrency bounds the requests in flight (default
	// registry.DefaultConcurrency).
	Concurrency int
}

// artifactRef is one artifact to look up: an OCIRepository's url and
// digest, and every OCIRepository that pins it.
type artifactRef struct {
	ref   string // repository@digest
	repos []*ociRepo
}

// checkRegistry looks up every artifact that an OCIRepository naming its
// fleet folder pins (HEAD by digest), and pulls those whose digest is not
// the folder's to say which files differ. A registry that cannot be asked
// (unreachable, credentials refused) stops the run with an error.
func (r *run) checkRegistry(ctx context.Context, repos []*ociRepo) error {
	rc := r.opts.Registry
	var refs []*artifactRef
	byRef := map[string]*artifactRef{}
	for _, o := range repos {
		if !o.annotated || o.digest == "" || !strings.HasPrefix(o.url, "oci://") {
			continue
		}
		ref := strings.TrimPrefix(o.url, "oci://") + "@" + o.digest
		key := ref
		if o.insecure {
			key += " insecure"
		}
		if a := byRef[key]; a != nil {
			a.repos = append(a.repos, o)
			continue
		}
		a := &artifactRef{ref: ref, repos: []*ociRepo{o}}
		byRef[key] = a
		refs = append(refs, a)
	}
	if len(refs) == 0 {
		return nil
	}
	r.log.Info("looking up artifacts in their registry", "artifacts", len(refs))
	limit := rc.Concurrency
	if limit <= 0 {
		limit = registry.DefaultConcurrency
	}
	var found atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	ropts := rc.Client.RemoteOptions(gctx)
	// One puller shares the connections and tokens of every request.
	puller, err := remote.NewPuller(ropts...)
	if err != nil {
		return err
	}
	// Clipped: the goroutines share it, and an append must copy it.
	ropts = slices.Clip(append(ropts, remote.Reuse(puller)))
	for _, a := range refs {
		g.Go(func() error {
			o := a.repos[0]
			nameOpts := rc.Client.NameOptions()
			if o.insecure {
				nameOpts = append(nameOpts, name.Insecure)
			}
			d, err := name.NewDigest(a.ref, nameOpts...)
			if err != nil {
				for _, o := range a.repos {
					r.findings.add(r.ociFinding(o, "spec.url", o.urlAt, "%s is not an artifact reference: %v", a.ref, err))
				}
				return nil
			}
			if _, err := remote.Head(d, ropts...); err != nil {
				if !registry.IsNotFound(err) {
					return fmt.Errorf("looking up the artifact %s: %w (verify uses the Docker configuration's credentials, and GITHUB_TOKEN for ghcr.io)", a.ref, err)
				}
				for _, o := range a.repos {
					r.findings.add(r.ociFinding(o, "spec.ref.digest", o.digestAt,
						"the registry has no artifact %s: source-controller cannot fetch it, and nothing of %s is applied; render pushes the artifact it pins (re-render)",
						a.ref, r.display(o.dir)))
				}
				return nil
			}
			found.Add(int64(len(a.repos)))
			for _, o := range a.repos {
				if o.built == "" || o.built == o.digest {
					continue
				}
				msg, err := r.registryDiff(gctx, o, d.String(), nameOpts, ropts)
				if err != nil {
					return err
				}
				r.findings.add(r.ociFinding(o, "spec.ref.digest", o.digestAt, "%s", msg))
			}
			return nil
		})
	}
	err = g.Wait()
	r.mu.Lock()
	r.stats.InRegistry += int(found.Load())
	r.mu.Unlock()
	return err
}

// registryDiff pulls the artifact an OCIRepository pins and says how its
// files differ from the folder's in Git: what Flux applies instead.
func (r *run) registryDiff(ctx context.Context, o *ociRepo, ref string, nameOpts []name.Option, ropts []remote.Option) (string, error) {
	pulled, err := artifact.Pull(ctx, ref, nameOpts, ropts...)
	if err != nil {
		// The registry failing is the run's error; an artifact that is not
		// in Flux's format is the fleet's finding.
		var te *transport.Error
		var ue *url.Error
		var ne net.Error
		if errors.As(err, &te) || errors.As(err, &ue) || errors.As(err, &ne) || ctx.Err() != nil {
			return "", fmt.Errorf("pulling the artifact %s: %w", ref, err)
		}
		return fmt.Sprintf("what the registry holds at this digest is not an artifact render writes: %v", err), nil
	}
	git := map[string][]byte{}
	files := r.artifactFiles(o)
	for _, f := range files {
		git[f.Name] = f.Data
	}
	var changed, onlyArtifact, onlyGit []string
	for _, f := range pulled {
		data, ok := git[f.Name]
		switch {
		case !ok:
			onlyArtifact = append(onlyArtifact, f.Name)
		case !bytes.Equal(data, f.Data):
			changed = append(changed, f.Name)
		}
		delete(git, f.Name)
	}
	for _, f := range files {
		if _, ok := git[f.Name]; ok {
			onlyGit = append(onlyGit, f.Name)
		}
	}
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"changed", changed}, {"only in the artifact", onlyArtifact}, {"only in Git", onlyGit}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+": "+strings.Join(p.names, ", "))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("the registry's artifact %s holds the same files as %s but is packed differently (another title or archive format); %s",
			o.digest, strings.TrimPrefix(r.filesOf(o), "the files of "), reRender), nil
	}
	return fmt.Sprintf("the registry's artifact %s, which Flux applies, differs from %s (%s); %s",
		o.digest, r.filesOf(o), strings.Join(parts, "; "), reRender), nil
}

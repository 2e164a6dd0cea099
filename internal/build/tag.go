package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fleetwright/fleetwright/internal/registry"
)

// TagLength is the number of hex digits of a content tag.
const TagLength = 16

// inputsVersion changes when the way inputs are hashed, or what a build
// makes of them, changes; it retires every earlier tag.
const inputsVersion = "fleetwright-build-inputs-v1"

// ContentTag returns the tag naming req's inputs: the first TagLength hex
// digits of a SHA-256 over the Dockerfile's bytes, every context file that
// .dockerignore keeps (path, mode and content), the build arguments (sorted),
// the target and the platforms. The repository, the tag field and
// SourceDateEpoch do not count.
func ContentTag(req Request) (string, error) {
	req, _, err := req.normalizeInputs()
	if err != nil {
		return "", err
	}
	bc, err := openContext(req)
	if err != nil {
		return "", err
	}
	defer bc.Close()
	return contentTag(req, bc)
}

func contentTag(req Request, bc *buildContext) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\nmode %q\n", inputsVersion, req.Mode.String())
	if req.Mode == ModeDockerfile {
		fmt.Fprintf(h, "dockerfile %d\n", len(bc.dockerfile))
		h.Write(bc.dockerfile)
	}
	for _, k := range slices.Sorted(maps.Keys(req.BuildArgs)) {
		fmt.Fprintf(h, "arg %q %q\n", k, req.BuildArgs[k])
	}
	fmt.Fprintf(h, "target %q\n", req.Target)
	for _, p := range slices.Sorted(slices.Values(req.Platforms)) {
		fmt.Fprintf(h, "platform %q\n", p)
	}
	if err := bc.digestInputs(h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:TagLength], nil
}

// Lookup finds the digest a reference points to; *registry.Client is one.
// A missing image must be an error matching registry.ErrNotFound.
type Lookup interface {
	Digest(ctx context.Context, ref string) (v1.Hash, error)
}

// ContentAddressed is a Builder that tags every image with ContentTag and
// asks the registry for that tag before building: when present, its digest
// is returned and nothing is built or pushed.
type ContentAddressed struct {
	Inner    Builder
	Registry Lookup
	Logger   *slog.Logger // nil discards
}

// Build implements Builder.
func (c *ContentAddressed) Build(ctx context.Context, req Request) (Result, error) {
	if req.Tag == "" {
		tag, err := ContentTag(req)
		if err != nil {
			return Result{}, buildErr(req.Name, err)
		}
		req.Tag = tag
	}
	norm, _, err := req.normalizeInputs()
	if err != nil {
		return Result{}, err
	}
	ref := req.Repo + ":" + req.Tag
	h, err := c.Registry.Digest(ctx, ref)
	switch {
	case err == nil:
		logger(c.Logger).Debug("image present, build skipped", "image", ref, "digest", h.String())
		return Result{
			Ref:       ref + "@" + h.String(),
			Repo:      req.Repo,
			Tag:       req.Tag,
			Digest:    h.String(),
			Platforms: norm.Platforms,
			Reused:    true,
		}, nil
	case errors.Is(err, registry.ErrNotFound):
		return c.Inner.Build(ctx, req)
	default:
		return Result{}, buildErr(req.Name, fmt.Errorf("checking for %s: %w", ref, err))
	}
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

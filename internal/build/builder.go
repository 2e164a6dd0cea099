package build

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Builder builds one image and pushes it.
type Builder interface {
	Build(ctx context.Context, req Request) (Result, error)
}

// BuilderFunc adapts a function to Builder.
type BuilderFunc func(ctx context.Context, req Request) (Result, error)

// Build calls f.
func (f BuilderFunc) Build(ctx context.Context, req Request) (Result, error) { return f(ctx, req) }

// Mode selects how an image is built.
type Mode int

const (
	// ModeDockerfile builds from a Dockerfile.
	ModeDockerfile Mode = iota
	// ModeBuildpack builds with Cloud Native Buildpacks.
	ModeBuildpack
)

func (m Mode) String() string {
	switch m {
	case ModeDockerfile:
		return "dockerfile"
	case ModeBuildpack:
		return "buildpack"
	default:
		return fmt.Sprintf("mode(%d)", int(m))
	}
}

// DefaultPlatforms returns the platforms built when a request names none.
func DefaultPlatforms() []string { return []string{"linux/amd64", "linux/arm64"} }

// Request describes one image build.
type Request struct {
	// Name labels the build in progress output, e.g. "shop/api-web".
	Name string
	// Root is the absolute path of the apps repository. The context and the
	// Dockerfile must resolve inside it.
	Root string
	// Context is the build context directory, absolute or relative to Root.
	Context string
	// Dockerfile is the Dockerfile's path relative to Context; default
	// "Dockerfile".
	Dockerfile string
	// Repo is the image repository, `<registry>/<project>/<app>-<component>`.
	Repo string
	// Tag is the tag to push. ContentAddressed sets it; builders used on
	// their own require it.
	Tag string
	// BuildArgs are the values of ARG instructions.
	BuildArgs map[string]string
	// Target is the stage to build; default the last.
	Target string
	// Platforms to build, as os/arch[/variant]; default DefaultPlatforms.
	Platforms []string
	// SourceDateEpoch is the time, in seconds since 1970, written as every
	// layer entry's modification time and the image's creation time.
	SourceDateEpoch int64
	// Mode selects the kind of build.
	Mode Mode
	// Project is the project of the component built: RUN may mount only
	// the secrets LocalOptions.SecretProjects lets it.
	Project string
}

// Result describes a pushed image.
type Result struct {
	// Ref is the pinned reference, `Repo:Tag@Digest`.
	Ref       string
	Repo      string
	Tag       string
	Digest    string
	Platforms []string
	// Reused is true when the registry already held the tag and nothing
	// was built.
	Reused bool
}

// ErrOutsideRoot is matched by errors about a path that resolves outside
// Request.Root or the build context.
var ErrOutsideRoot = errors.New("resolves outside the allowed root")

// normalize checks req for a build and fills defaults. Platforms come back
// parsed, deduplicated, in the order given.
func (req Request) normalize() (Request, []v1.Platform, error) {
	if req.Repo == "" {
		return req, nil, buildErr(req.Name, errors.New("no image repository"))
	}
	if req.Tag == "" {
		return req, nil, buildErr(req.Name, errors.New("no tag"))
	}
	return req.normalizeInputs()
}

// normalizeInputs checks and fills what names the build's inputs.
func (req Request) normalizeInputs() (Request, []v1.Platform, error) {
	if req.Root == "" || !filepath.IsAbs(req.Root) {
		return req, nil, buildErr(req.Name, fmt.Errorf("root %q must be an absolute path", req.Root))
	}
	if req.Context == "" {
		req.Context = "."
	}
	if req.Dockerfile == "" {
		req.Dockerfile = "Dockerfile"
	}
	if len(req.Platforms) == 0 {
		req.Platforms = DefaultPlatforms()
	}
	var plats []v1.Platform
	var names []string
	for _, s := range req.Platforms {
		p, err := parsePlatform(s)
		if err != nil {
			return req, nil, buildErr(req.Name, err)
		}
		if !slices.Contains(names, platformString(p)) {
			names = append(names, platformString(p))
			plats = append(plats, p)
		}
	}
	req.Platforms = names
	return req, plats, nil
}

// parsePlatform parses os/arch[/variant], normalizing arm64's default
// variant away.
func parsePlatform(s string) (v1.Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return v1.Platform{}, fmt.Errorf("platform %q: want os/arch[/variant]", s)
	}
	p := v1.Platform{OS: strings.ToLower(parts[0]), Architecture: strings.ToLower(parts[1])}
	if len(parts) == 3 {
		p.Variant = strings.ToLower(parts[2])
	}
	if p.Architecture == "arm64" && p.Variant == "v8" {
		p.Variant = ""
	}
	return p, nil
}

func platformString(p v1.Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// platformMatches reports whether an image for have can run as want.
func platformMatches(want, have v1.Platform) bool {
	if want.OS != have.OS || want.Architecture != have.Architecture {
		return false
	}
	hv := have.Variant
	if have.Architecture == "arm64" && hv == "v8" {
		hv = ""
	}
	return want.Variant == "" || want.Variant == hv
}

// buildErr prefixes err with the build's name, when it has one.
func buildErr(name string, err error) error {
	if name == "" {
		return err
	}
	return fmt.Errorf("build %s: %w", name, err)
}

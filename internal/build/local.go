package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/fleetwright/fleetwright/internal/registry"
)

// LocalOptions configure a Local builder.
type LocalOptions struct {
	// Registry pulls base images and pushes results. Required.
	Registry *registry.Client
	// BuildPlatform is the value of the BUILDPLATFORM argument; default
	// this machine's (linux/<GOARCH>), where RUN executes natively.
	BuildPlatform string
	// Logger receives progress at debug level; nil discards.
	Logger *slog.Logger

	// WorkDir holds what RUN needs while a build runs (unpacked root
	// filesystems, layer files); default the system's temporary folder.
	// Each build's part is removed when it ends.
	WorkDir string
	// CacheDir holds the directories of RUN --mount=type=cache, kept
	// between builds; default fleetwright/build-cache in the user's cache
	// folder.
	CacheDir string
	// Secrets are the values RUN --mount=type=secret,id=… can mount.
	Secrets map[string]SecretSource
	// SecretProjects restricts secrets to projects: a build may mount a
	// secret listed here only when its Request.Project is in the list
	// (an empty list: no build may). A secret not listed here may be
	// mounted by every build, as one given on render's command line.
	SecretProjects map[string][]string
	// LookupEnv reads secrets named by environment variable; default
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Network is the network RUN gets: "none" (the default; only a
	// loopback interface) or "host", which also allows RUN --network=host.
	Network string
	// Timeout bounds one build, RUN commands included: a command still
	// running then is killed with every process it started. Default one
	// hour.
	Timeout time.Duration
	// Output, when set, receives what RUN commands print, as they print
	// it, with secret values masked.
	Output io.Writer
	// NoRun refuses RUN with an *UnsupportedError, so that Fallback hands
	// such Dockerfiles to the external builder.
	NoRun bool
	// NoRegistryCache leaves the layer cache manifest (CacheTag) unread and
	// unwritten.
	NoRegistryCache bool
	// Runtime is the OCI runtime that runs RUN: a path, or a name looked up
	// in PATH; default runc, else crun.
	Runtime string
	// Init is the pid 1 of each RUN's container: a statically linked
	// executable that imports package sandboxinit, run from a read-only
	// mount. Default: the builder's own executable when it is statically
	// linked (release builds are); otherwise the runtime's init is pid 1
	// and each RUN takes one more runtime call (see docs/build.md).
	Init string
	// Limits bound each RUN's memory, processes and CPU (as root; see
	// docs/build.md); zero fields take DefaultLimits.
	Limits Limits
}

// Local builds Dockerfiles without a container daemon. RUN runs in an OCI
// runtime (runc or crun; see the package documentation).
type Local struct {
	reg           *registry.Client
	buildPlatform v1.Platform
	log           *slog.Logger

	workDir        string
	cacheRoot      string
	secrets        map[string]SecretSource
	secretProjects map[string][]string
	lookupEnv      func(string) (string, bool)
	network        string
	timeout        time.Duration
	output         io.Writer
	rootless       bool
	binfmtDir      string
	noRegCache     bool
	noRun          bool
	cacheMu        sync.Mutex
	cacheLocks     map[string]*sync.Mutex
	ids            idMap
	limits         Limits
	runtime        string
	rtOnce         sync.Once
	rtPath         string
	rtErr          error
	initOpt        string
	initOnce       sync.Once
	initPath       string
	limitsOnce     sync.Once // the note that limits are not applied
}

// NewLocal returns a Local builder.
func NewLocal(opts LocalOptions) (*Local, error) {
	if opts.Registry == nil {
		return nil, errors.New("local builder: no registry client")
	}
	bp := opts.BuildPlatform
	if bp == "" {
		bp = "linux/" + runtime.GOARCH
	}
	p, err := parsePlatform(bp)
	if err != nil {
		return nil, fmt.Errorf("local builder: build platform: %w", err)
	}
	l := &Local{
		reg: opts.Registry, buildPlatform: p, log: logger(opts.Logger),
		workDir: opts.WorkDir, cacheRoot: opts.CacheDir, secrets: opts.Secrets, secretProjects: opts.SecretProjects, lookupEnv: opts.LookupEnv,
		network: opts.Network, timeout: opts.Timeout, output: opts.Output, rootless: os.Geteuid() != 0,
		binfmtDir: binfmtDir, noRegCache: opts.NoRegistryCache, noRun: opts.NoRun, cacheLocks: map[string]*sync.Mutex{},
		runtime: opts.Runtime, limits: opts.Limits.withDefaults(), initOpt: opts.Init,
	}
	l.ids = idMap{base: rootIDBase, gidBase: rootIDBase}
	if l.rootless {
		l.ids = idMap{rootless: true, base: uint32(os.Geteuid()), gidBase: uint32(os.Getegid())}
	}
	switch l.network {
	case "":
		l.network = "none"
	case "none", "host":
	default:
		return nil, fmt.Errorf("local builder: network %q: want none or host", l.network)
	}
	if l.timeout <= 0 {
		l.timeout = time.Hour
	}
	if l.lookupEnv == nil {
		l.lookupEnv = os.LookupEnv
	}
	if l.cacheRoot == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		l.cacheRoot = filepath.Join(dir, "fleetwright", "build-cache")
	}
	return l, nil
}

// Build implements Builder. The request must carry a Tag.
func (l *Local) Build(ctx context.Context, req Request) (Result, error) {
	explicit := len(req.Platforms) > 0
	req, plats, err := req.normalize()
	if err != nil {
		return Result{}, err
	}
	if req.Mode != ModeDockerfile {
		return Result{}, buildErr(req.Name, fmt.Errorf("the local builder builds Dockerfiles, not %s", req.Mode))
	}
	bc, err := openContext(req)
	if err != nil {
		return Result{}, buildErr(req.Name, err)
	}
	defer bc.Close()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	x := &executor{
		l:      l,
		req:    req,
		bc:     bc,
		epoch:  time.Unix(req.SourceDateEpoch, 0).UTC(),
		layers: map[string]*memLayer{},
		bases:  map[string]*baseImage{},
		images: map[string]*stageFS{},
	}
	defer x.cleanup()
	res, err := x.run(ctx, plats, explicit)
	var runErr *RunError
	if err != nil && ctx.Err() != nil && parent.Err() == nil && !errors.As(err, &runErr) {
		err = fmt.Errorf("%w: the build took longer than its timeout of %v", err, l.timeout)
	}
	if err != nil {
		return Result{}, buildErr(req.Name, err)
	}
	return res, nil
}

// platPlan is the plan of one platform of a build.
type platPlan struct {
	df *dockerfile
	p  *plan
}

// executor holds the state of one build.
type executor struct {
	l      *Local
	req    Request
	bc     *buildContext
	epoch  time.Time
	layers map[string]*memLayer  // by media type and content, shared across platforms
	bases  map[string]*baseImage // registry images by reference
	files  map[string][]byte     // context files read, shared across platforms
	images map[string]*stageFS   // COPY --from images, by reference and platform

	// RUN's state: the work directory and what is in it, and the layer
	// cache.
	workDir   string
	layerSeq  int
	rootfses  []*rootFS
	cache     *runCache
	secretDir string         // a folder on a tmpfs for the files of secret mounts
	bg        sync.WaitGroup // containers being deleted
}

// readFile reads a context file once per build.
func (x *executor) readFile(rel string) ([]byte, error) {
	if b, ok := x.files[rel]; ok {
		return b, nil
	}
	b, err := x.bc.readFile(rel)
	if err != nil {
		return nil, err
	}
	if x.files == nil {
		x.files = map[string][]byte{}
	}
	x.files[rel] = b
	return b, nil
}

// run builds the image for plats and pushes it: one image, or an index of
// one per platform that the base images offer.
func (x *executor) run(ctx context.Context, plats []v1.Platform, explicit bool) (Result, error) {
	plans, err := x.planAll(plats)
	if err != nil {
		return Result{}, err
	}
	kept, err := x.keepOffered(ctx, plans, explicit)
	if err != nil {
		return Result{}, err
	}
	x.logPlatforms(plats, kept, explicit)

	if hasRun(kept[0].df) && !x.l.noRegCache {
		x.cache = x.l.loadCache(ctx, x.req.Repo)
	}
	var images []builtImage
	for _, pp := range kept {
		img, err := x.runPlan(ctx, pp.df, pp.p)
		if err != nil {
			return Result{}, err
		}
		images = append(images, builtImage{img, pp.p.platform})
		x.l.log.Debug("image built", "build", x.req.Name, "platform", platformString(pp.p.platform))
	}
	ref := x.req.Repo + ":" + x.req.Tag
	digest, platforms, err := x.push(ctx, ref, images)
	if err != nil {
		return Result{}, err
	}
	if err := x.cache.save(); err != nil {
		// The image is pushed; a cache that could not be written only
		// costs the next build time.
		x.l.log.Warn("layer cache not saved", "build", x.req.Name, "err", err)
	}
	return Result{
		Ref:       ref + "@" + digest.String(),
		Repo:      x.req.Repo,
		Tag:       x.req.Tag,
		Digest:    digest.String(),
		Platforms: platforms,
	}, nil
}

// planAll plans every platform first: unsupported instructions fail
// before any network traffic. Each plan parses afresh, since expansion
// rewrites the parsed instructions in place.
func (x *executor) planAll(plats []v1.Platform) ([]platPlan, error) {
	var plans []platPlan
	for _, pl := range plats {
		df, err := parseDockerfile(x.bc.display, x.bc.dockerfile)
		if err != nil {
			return nil, err
		}
		p, err := df.plan(pl, x.l.buildPlatform, x.req.BuildArgs, x.req.Target)
		if err != nil {
			return nil, err
		}
		if x.l.noRun {
			if line := firstRun(p.needed); line > 0 {
				return nil, &UnsupportedError{File: df.file, Line: line, Instruction: "RUN", Reason: "is left to the external builder"}
			}
		}
		plans = append(plans, platPlan{df, p})
	}
	return plans, nil
}

// keepOffered keeps the plans of the platforms every registry image they
// read offers. A platform asked for explicitly, or an image read for
// another platform than the plan's, that is not offered is an error; so
// is keeping none.
func (x *executor) keepOffered(ctx context.Context, plans []platPlan, explicit bool) ([]platPlan, error) {
	var kept []platPlan
	for _, pp := range plans {
		ok := true
		for _, use := range pp.p.images {
			b, err := x.base(ctx, pp.df, use)
			if err != nil {
				return nil, err
			}
			if b.has(use.platform) {
				continue
			}
			if explicit || platformString(use.platform) != platformString(pp.p.platform) {
				return nil, pp.df.errorf(use.line, "%s has no image for %s (it has %s)", use.ref, platformString(use.platform), b.platformList())
			}
			ok = false
			x.l.log.Debug("platform skipped", "build", x.req.Name, "platform", platformString(pp.p.platform), "image", use.ref)
		}
		if ok {
			kept = append(kept, pp)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("%s: the base images share none of the platforms %s", x.bc.display, strings.Join(x.req.Platforms, ", "))
	}
	return kept, nil
}

// builtImage is the image built for one platform.
type builtImage struct {
	img      v1.Image
	platform v1.Platform
}

// push pushes the images to ref: one image alone, several as an index
// of the media type family of the first. It returns the digest pushed and
// the images' platforms.
func (x *executor) push(ctx context.Context, ref string, images []builtImage) (v1.Hash, []string, error) {
	tag, err := name.NewTag(ref, x.l.reg.NameOptions()...)
	if err != nil {
		return v1.Hash{}, nil, fmt.Errorf("image reference %q: %w", ref, err)
	}
	opts := x.l.reg.RemoteOptions(ctx)
	if len(images) == 1 {
		if err := remote.Write(tag, images[0].img, opts...); err != nil {
			return v1.Hash{}, nil, fmt.Errorf("pushing %s: %w", ref, err)
		}
		digest, err := images[0].img.Digest()
		if err != nil {
			return v1.Hash{}, nil, err
		}
		return digest, []string{platformString(images[0].platform)}, nil
	}
	idx, platforms, err := imageIndex(images)
	if err != nil {
		return v1.Hash{}, nil, err
	}
	if err := remote.WriteIndex(tag, idx, opts...); err != nil {
		return v1.Hash{}, nil, fmt.Errorf("pushing %s: %w", ref, err)
	}
	digest, err := idx.Digest()
	if err != nil {
		return v1.Hash{}, nil, err
	}
	return digest, platforms, nil
}

// imageIndex is the index of images, an OCI index or, for Docker images,
// a Docker manifest list, with the images' platforms.
func imageIndex(images []builtImage) (v1.ImageIndex, []string, error) {
	mt, err := images[0].img.MediaType()
	if err != nil {
		return nil, nil, err
	}
	idxType := types.OCIImageIndex
	if mt == types.DockerManifestSchema2 {
		idxType = types.DockerManifestList
	}
	var idx v1.ImageIndex = mutate.IndexMediaType(empty.Index, idxType)
	var platforms []string
	for _, b := range images {
		imt, err := b.img.MediaType()
		if err != nil {
			return nil, nil, err
		}
		cf, err := b.img.ConfigFile()
		if err != nil {
			return nil, nil, err
		}
		p := v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        b.img,
			Descriptor: v1.Descriptor{MediaType: imt, Platform: &p},
		})
		platforms = append(platforms, platformString(b.platform))
	}
	return idx, platforms, nil
}

// logPlatforms says on the output which platforms the build makes, and
// why those.
func (x *executor) logPlatforms(plats []v1.Platform, kept []platPlan, explicit bool) {
	if x.l.output == nil {
		return
	}
	var names []string
	for _, pp := range kept {
		names = append(names, platformString(pp.p.platform))
	}
	why := "build.platforms"
	switch {
	case explicit:
	case len(kept) < len(plats):
		var all []string
		for _, p := range plats {
			all = append(all, platformString(p))
		}
		why = fmt.Sprintf("of the default platforms %s, the base images have only these; build.platforms is not set", strings.Join(all, ", "))
	default:
		why = "the default platforms; build.platforms is not set"
	}
	prefix := ""
	if x.req.Name != "" {
		prefix = x.req.Name + ": "
	}
	fmt.Fprintf(x.l.output, "%s%s: building %s (%s)\n", prefix, x.bc.display, strings.Join(names, ", "), why)
}

// baseImage is a registry image used by FROM or COPY --from.
type baseImage struct {
	ref      string
	index    v1.ImageIndex
	manifest *v1.IndexManifest
	image    v1.Image
	platform *v1.Platform // of a single image
	byPlat   map[string]v1.Image
}

func (x *executor) base(ctx context.Context, df *dockerfile, use imageUse) (*baseImage, error) {
	if b, ok := x.bases[use.ref]; ok {
		return b, nil
	}
	desc, err := x.l.reg.Get(ctx, use.ref)
	if err != nil {
		return nil, df.errorf(use.line, "%w", err)
	}
	b := &baseImage{ref: use.ref, byPlat: map[string]v1.Image{}}
	if desc.MediaType.IsIndex() {
		if b.index, err = desc.ImageIndex(); err != nil {
			return nil, df.errorf(use.line, "%s: %w", use.ref, err)
		}
		if b.manifest, err = b.index.IndexManifest(); err != nil {
			return nil, df.errorf(use.line, "%s: %w", use.ref, err)
		}
	} else {
		if b.image, err = desc.Image(); err != nil {
			return nil, df.errorf(use.line, "%s: %w", use.ref, err)
		}
		cf, err := b.image.ConfigFile()
		if err != nil {
			return nil, df.errorf(use.line, "%s: %w", use.ref, err)
		}
		if cf.OS != "" && cf.Architecture != "" {
			b.platform = &v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}
		}
	}
	x.bases[use.ref] = b
	return b, nil
}

// pick returns the index entry for p, or -1.
func (b *baseImage) pick(p v1.Platform) int {
	best := -1
	for i, m := range b.manifest.Manifests {
		if m.Platform == nil || !m.MediaType.IsImage() || !platformMatches(p, *m.Platform) {
			continue
		}
		if best < 0 || (m.Platform.Variant == "" && b.manifest.Manifests[best].Platform.Variant != "") {
			best = i
		}
	}
	return best
}

func (b *baseImage) has(p v1.Platform) bool {
	if b.index != nil {
		return b.pick(p) >= 0
	}
	return b.platform == nil || platformMatches(p, *b.platform)
}

func (b *baseImage) platformList() string {
	if b.index == nil {
		if b.platform == nil {
			return "no platform"
		}
		return platformString(*b.platform)
	}
	var out []string
	for _, m := range b.manifest.Manifests {
		if m.Platform != nil && m.MediaType.IsImage() {
			out = append(out, platformString(*m.Platform))
		}
	}
	if len(out) == 0 {
		return "no platform"
	}
	return strings.Join(out, ", ")
}

func (b *baseImage) forPlatform(p v1.Platform) (v1.Image, error) {
	key := platformString(p)
	if img, ok := b.byPlat[key]; ok {
		return img, nil
	}
	var img v1.Image
	if b.index == nil {
		if !b.has(p) {
			return nil, fmt.Errorf("%s has no image for %s (it has %s)", b.ref, key, b.platformList())
		}
		img = b.image
	} else {
		i := b.pick(p)
		if i < 0 {
			return nil, fmt.Errorf("%s has no image for %s (it has %s)", b.ref, key, b.platformList())
		}
		var err error
		if img, err = b.index.Image(b.manifest.Manifests[i].Digest); err != nil {
			return nil, fmt.Errorf("%s: %w", b.ref, err)
		}
	}
	b.byPlat[key] = img
	return img, nil
}

// layerFor returns the layer for an uncompressed tar stream, making it once
// per build.
func (x *executor) layerFor(raw []byte, mt types.MediaType) (*memLayer, error) {
	key := string(mt) + "@" + sha256Hash(raw).Hex
	if l, ok := x.layers[key]; ok {
		return l, nil
	}
	l, err := newMemLayer(raw, mt)
	if err != nil {
		return nil, err
	}
	x.layers[key] = l
	return l, nil
}

// defaultPath is the PATH BuildKit gives images built from scratch.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// scratchImage is an empty OCI image for platform p.
func scratchImage(p v1.Platform) (v1.Image, *v1.ConfigFile) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	cf := &v1.ConfigFile{
		Architecture: p.Architecture,
		OS:           p.OS,
		Variant:      p.Variant,
		RootFS:       v1.RootFS{Type: "layers"},
		Config:       v1.Config{Env: []string{"PATH=" + defaultPath}},
	}
	return img, cf
}

// layerMediaType is the layer type matching an image's manifest type.
func layerMediaType(img v1.Image) (types.MediaType, error) {
	mt, err := img.MediaType()
	if err != nil {
		return "", err
	}
	if mt == types.DockerManifestSchema2 {
		return types.DockerLayer, nil
	}
	return types.OCILayer, nil
}

func cloneKnown(m map[string]*fileEntry) map[string]*fileEntry {
	if m == nil {
		return nil
	}
	out := make(map[string]*fileEntry, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

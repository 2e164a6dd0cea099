package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"
)

// DefaultConcurrency bounds the requests PinAll keeps in flight when
// Options.Concurrency is zero.
const DefaultConcurrency = 8

// ErrNotFound is matched (errors.Is) by errors about an image or tag the
// registry does not have.
var ErrNotFound = errors.New("image not found")

// UnreachableError reports a registry that could not be contacted.
type UnreachableError struct {
	Image    string // the reference being resolved
	Registry string // host[:port]
	Err      error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s: registry %s unreachable: %v", e.Image, e.Registry, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Options configure a Client. The zero value talks anonymously to registries
// over the default transport.
type Options struct {
	// Keychain supplies credentials per registry; nil means anonymous.
	Keychain authn.Keychain
	// Transport carries the requests; nil means remote.DefaultTransport.
	Transport http.RoundTripper
	// Concurrency bounds PinAll; zero means DefaultConcurrency.
	Concurrency int
	// NameOptions apply when parsing references (for example name.Insecure).
	NameOptions []name.Option
	// RemoteOptions are appended to every request's options (for example
	// remote.WithRetryBackoff).
	RemoteOptions []remote.Option
	// Logger receives debug lines; nil discards.
	Logger *slog.Logger
}

// Client resolves references. It is safe for concurrent use.
type Client struct {
	opts Options
	log  *slog.Logger
}

// New returns a Client with the given options.
func New(opts Options) *Client {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{opts: opts, log: log}
}

// ParseReference parses ref with the client's name options.
func (c *Client) ParseReference(ref string) (name.Reference, error) {
	r, err := name.ParseReference(ref, c.opts.NameOptions...)
	if err != nil {
		return nil, fmt.Errorf("parsing image reference %q: %w", ref, err)
	}
	return r, nil
}

// NameOptions returns the options the client parses references with.
func (c *Client) NameOptions() []name.Option {
	return append([]name.Option(nil), c.opts.NameOptions...)
}

// RemoteOptions returns go-containerregistry options carrying the client's
// credentials, transport and ctx, for pulling and pushing images.
func (c *Client) RemoteOptions(ctx context.Context) []remote.Option {
	o := []remote.Option{remote.WithContext(ctx)}
	if c.opts.Keychain != nil {
		o = append(o, remote.WithAuthFromKeychain(c.opts.Keychain))
	}
	if c.opts.Transport != nil {
		o = append(o, remote.WithTransport(c.opts.Transport))
	}
	return append(o, c.opts.RemoteOptions...)
}

// Digest returns the digest of the manifest (or index) ref names.
func (c *Client) Digest(ctx context.Context, ref string) (v1.Hash, error) {
	r, err := c.ParseReference(ref)
	if err != nil {
		return v1.Hash{}, err
	}
	return c.digest(ctx, ref, r)
}

func (c *Client) digest(ctx context.Context, ref string, r name.Reference) (v1.Hash, error) {
	desc, err := remote.Head(r, c.RemoteOptions(ctx)...)
	if err == nil {
		return desc.Digest, nil
	}
	if classified := classify(ref, r, err); !isHeadUnsupported(err) || errors.Is(classified, ErrNotFound) {
		return v1.Hash{}, classified
	}
	// Some registries answer HEAD without a digest header: fall back to GET.
	full, err := remote.Get(r, c.RemoteOptions(ctx)...)
	if err != nil {
		return v1.Hash{}, classify(ref, r, err)
	}
	return full.Digest, nil
}

// Get fetches the manifest or index ref names. Errors name the image and
// match ErrNotFound or *UnreachableError where they apply.
func (c *Client) Get(ctx context.Context, ref string) (*remote.Descriptor, error) {
	r, err := c.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	desc, err := remote.Get(r, c.RemoteOptions(ctx)...)
	if err != nil {
		return nil, classify(ref, r, err)
	}
	return desc, nil
}

// Exists reports whether ref is present. A missing repository or tag is
// (false, nil); any other failure is an error naming the image.
func (c *Client) Exists(ctx context.Context, ref string) (bool, error) {
	r, err := c.ParseReference(ref)
	if err != nil {
		return false, err
	}
	_, err = c.digest(ctx, ref, r)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	default:
		return false, err
	}
}

// Pin resolves ref to `name:tag@sha256:...`. A reference that already holds
// a digest is returned unchanged without contacting the registry; one
// without a tag is pinned as `name:latest@sha256:...`.
func (c *Client) Pin(ctx context.Context, ref string) (string, error) {
	r, err := c.ParseReference(ref)
	if err != nil {
		return "", err
	}
	if _, ok := r.(name.Digest); ok {
		return ref, nil
	}
	h, err := c.digest(ctx, ref, r)
	if err != nil {
		return "", err
	}
	pinned := ref
	if !hasTag(ref) {
		pinned += ":" + r.Identifier()
	}
	pinned += "@" + h.String()
	c.log.Debug("pinned image", "ref", ref, "digest", h.String())
	return pinned, nil
}

// PinAll pins refs concurrently (at most Options.Concurrency at once) and
// returns the pinned references in the order given. Each distinct reference
// is resolved once. Every failure is reported, joined.
func (c *Client) PinAll(ctx context.Context, refs []string) ([]string, error) {
	unique := make(map[string]int, len(refs))
	var order []string
	for _, r := range refs {
		if _, ok := unique[r]; !ok {
			unique[r] = len(order)
			order = append(order, r)
		}
	}
	pinned := make([]string, len(order))
	errs := make([]error, len(order))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.opts.Concurrency)
	for i, r := range order {
		g.Go(func() error {
			pinned[i], errs[i] = c.Pin(gctx, r)
			return nil
		})
	}
	_ = g.Wait() // the goroutines report through errs
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = pinned[unique[r]]
	}
	return out, nil
}

// hasTag reports whether the reference text names a tag explicitly.
func hasTag(ref string) bool {
	last := ref[strings.LastIndex(ref, "/")+1:]
	return strings.Contains(last, ":")
}

func isHeadUnsupported(err error) bool {
	var te *transport.Error
	if errors.As(err, &te) {
		return te.StatusCode == http.StatusMethodNotAllowed
	}
	// remote.Head fails this way when the response lacks Docker-Content-Digest.
	return strings.Contains(err.Error(), "Docker-Content-Digest")
}

// IsNotFound reports whether a go-containerregistry error is a registry's
// answer that it has no such manifest, blob or repository: a 404, or one
// of the distribution spec's MANIFEST_UNKNOWN and NAME_UNKNOWN codes.
func IsNotFound(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	if te.StatusCode == http.StatusNotFound {
		return true
	}
	for _, d := range te.Errors {
		if d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode {
			return true
		}
	}
	return false
}

// classify turns a go-containerregistry error into one that names the image
// and matches ErrNotFound or *UnreachableError where it applies.
func classify(ref string, r name.Reference, err error) error {
	if IsNotFound(err) {
		return fmt.Errorf("%s: %w", ref, ErrNotFound)
	}
	var te *transport.Error
	if errors.As(err, &te) {
		return fmt.Errorf("%s: %w", ref, err)
	}
	var netErr net.Error
	var urlErr *url.Error
	if errors.As(err, &netErr) || errors.As(err, &urlErr) {
		return &UnreachableError{Image: ref, Registry: r.Context().RegistryStr(), Err: err}
	}
	return fmt.Errorf("%s: %w", ref, err)
}

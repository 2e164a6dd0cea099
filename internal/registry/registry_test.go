package registry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fleetwright/fleetwright/internal/registry"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
)

// seed pushes a random image to ref and returns its digest.
func seed(t *testing.T, ref string, index bool) v1.Hash {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if index {
		idx, err := random.Index(64, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.WriteIndex(r, idx); err != nil {
			t.Fatal(err)
		}
		h, err := idx.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	h, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestPin(t *testing.T) {
	t.Parallel()
	srv := registrytest.New(t, registrytest.Options{})
	host := srv.Host()
	app := seed(t, host+"/shop/api:v1", false)
	multi := seed(t, host+"/shop/web:v2", true)
	latest := seed(t, host+"/shop/worker:latest", false)
	fixed := "sha256:" + strings.Repeat("a", 64)

	tests := []struct {
		name string
		ref  string
		want string
	}{
		{"tag", host + "/shop/api:v1", host + "/shop/api:v1@" + app.String()},
		{"index", host + "/shop/web:v2", host + "/shop/web:v2@" + multi.String()},
		{"no tag means latest", host + "/shop/worker", host + "/shop/worker:latest@" + latest.String()},
		{"digest kept", host + "/shop/api@" + fixed, host + "/shop/api@" + fixed},
		{"tag and digest kept", "nowhere.invalid/x/y:v9@" + fixed, "nowhere.invalid/x/y:v9@" + fixed},
	}
	c := registry.New(registry.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := c.Pin(context.Background(), tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Pin(%q) = %q, want %q", tt.ref, got, tt.want)
			}
		})
	}
}

func TestPinDigestMakesNoRequest(t *testing.T) {
	t.Parallel()
	srv := registrytest.New(t, registrytest.Options{})
	c := registry.New(registry.Options{})
	ref := srv.Host() + "/a/b:c@sha256:" + strings.Repeat("0", 64)
	if _, err := c.Pin(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("pinning a digest reference made %d requests, want 0", n)
	}
}

func TestExists(t *testing.T) {
	t.Parallel()
	srv := registrytest.New(t, registrytest.Options{})
	host := srv.Host()
	seed(t, host+"/shop/api:v1", false)
	srv.Reset()
	tests := []struct {
		ref  string
		want bool
	}{
		{host + "/shop/api:v1", true},
		{host + "/shop/api:v2", false},
		{host + "/shop/nothing:v1", false},
	}
	c := registry.New(registry.Options{})
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			t.Parallel()
			got, err := c.Exists(context.Background(), tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Exists(%q) = %v, want %v", tt.ref, got, tt.want)
			}
			if srv.Writes() != nil {
				t.Errorf("Exists wrote to the registry: %v", srv.Writes())
			}
		})
	}
}

func TestPinMissingIsNotFound(t *testing.T) {
	t.Parallel()
	srv := registrytest.New(t, registrytest.Options{})
	c := registry.New(registry.Options{})
	ref := srv.Host() + "/shop/api:missing"
	_, err := c.Pin(context.Background(), ref)
	if !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("Pin of a missing tag: err = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), ref) {
		t.Errorf("error %q does not name %s", err, ref)
	}
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	srv := registrytest.New(t, registrytest.Options{})
	host := srv.Host()
	srv.Close()
	c := registry.New(registry.Options{})
	ref := host + "/shop/api:v1"
	for _, op := range []string{"pin", "exists"} {
		var err error
		if op == "pin" {
			_, err = c.Pin(context.Background(), ref)
		} else {
			_, err = c.Exists(context.Background(), ref)
		}
		var ue *registry.UnreachableError
		if !errors.As(err, &ue) {
			t.Fatalf("%s: err = %v (%T), want *UnreachableError", op, err, err)
		}
		if ue.Registry != host || !strings.HasPrefix(err.Error(), ref+": registry "+host+" unreachable") {
			t.Errorf("%s: error %q should start by naming %s and its registry", op, err, ref)
		}
	}
}

func TestPinAll(t *testing.T) {
	t.Parallel()
	srv := registrytest.New(t, registrytest.Options{Delay: 5 * time.Millisecond})
	host := srv.Host()
	var refs, want []string
	for i := range 12 {
		ref := fmt.Sprintf("%s/p/app%d:v1", host, i)
		h := seed(t, ref, i%3 == 0)
		refs = append(refs, ref)
		want = append(want, ref+"@"+h.String())
	}
	// a duplicate is resolved once and answered twice
	refs = append(refs, refs[0])
	want = append(want, want[0])
	srv.Reset()

	c := registry.New(registry.Options{Concurrency: 3})
	got, err := c.PinAll(context.Background(), refs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PinAll (-want +got):\n%s", diff)
	}
	if m := srv.MaxInFlight(); m > 3 {
		t.Errorf("%d requests in flight at once, want at most 3", m)
	}
	heads := 0
	for _, r := range srv.Requests() {
		if r.Method == "HEAD" {
			heads++
		}
	}
	if heads != 12 {
		t.Errorf("%d HEAD requests for 12 distinct images, want 12", heads)
	}
}

func TestPinAllReportsEveryFailure(t *testing.T) {
	t.Parallel()
	srv := registrytest.New(t, registrytest.Options{})
	host := srv.Host()
	seed(t, host+"/p/ok:v1", false)
	c := registry.New(registry.Options{})
	_, err := c.PinAll(context.Background(), []string{host + "/p/ok:v1", host + "/p/gone:v1", host + "/p/lost:v2"})
	if !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	for _, img := range []string{"/p/gone:v1", "/p/lost:v2"} {
		if !strings.Contains(err.Error(), host+img) {
			t.Errorf("error %q does not name %s", err, img)
		}
	}
	if strings.Contains(err.Error(), "/p/ok:v1") {
		t.Errorf("error %q names an image that resolved", err)
	}
}

func TestBadReference(t *testing.T) {
	t.Parallel()
	c := registry.New(registry.Options{})
	_, err := c.Pin(context.Background(), "UPPER/Case:tag")
	if err == nil || !strings.Contains(err.Error(), `"UPPER/Case:tag"`) {
		t.Errorf("err = %v, want a parse error naming the reference", err)
	}
}

// staticKeychain answers every registry with one username and password.
type staticKeychain struct{ user, pass string }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return &authn.Basic{Username: k.user, Password: k.pass}, nil
}

func TestAuth(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-value-never-printed"
	srv := registrytest.New(t, registrytest.Options{Username: "ci", Password: secret})
	host := srv.Host()
	ref := host + "/p/private:v1"
	img, err := random.Image(32, 1)
	if err != nil {
		t.Fatal(err)
	}
	good := registry.New(registry.Options{Keychain: registry.Keychain(staticKeychain{"ci", secret}, registry.GitHubCredentials{})})
	r, _ := name.ParseReference(ref)
	if err := remote.Write(r, img, good.RemoteOptions(context.Background())...); err != nil {
		t.Fatal(err)
	}
	h, _ := img.Digest()
	got, err := good.Pin(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if want := ref + "@" + h.String(); got != want {
		t.Errorf("Pin = %q, want %q", got, want)
	}

	bad := registry.New(registry.Options{Keychain: staticKeychain{"ci", secret + "-wrong"}})
	_, err = bad.Pin(context.Background(), ref)
	if err == nil {
		t.Fatal("Pin with wrong credentials succeeded")
	}
	if !strings.Contains(err.Error(), ref) {
		t.Errorf("error %q does not name the image", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error %q shows the password", err)
	}
}

package artifact_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
)

func folder() []artifact.File {
	return []artifact.File{
		{Name: "kustomization.yaml", Data: []byte("resources:\n- deployment-web.yaml\n")},
		{Name: "deployment-web.yaml", Data: []byte("kind: Deployment\n")},
		{Name: "conf/nested/app.conf", Data: []byte("x=1\n")},
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	a, err := artifact.Build("apps/prod/shop/web/api", folder())
	if err != nil {
		t.Fatal(err)
	}
	files := folder()
	slices.Reverse(files)
	b, err := artifact.Build("apps/prod/shop/web/api", files)
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest != b.Digest || !bytes.Equal(a.Layer, b.Layer) || !bytes.Equal(a.Manifest, b.Manifest) {
		t.Fatalf("same files in another order gave another artifact: %s, %s", a.Digest, b.Digest)
	}
	// Anything else changes the digest: a byte, a name, the folder.
	changed := folder()
	changed[1].Data = []byte("kind: Deployment \n")
	for what, files := range map[string][]artifact.File{"a byte": changed, "a file less": folder()[:2]} {
		c, err := artifact.Build("apps/prod/shop/web/api", files)
		if err != nil {
			t.Fatal(err)
		}
		if c.Digest == a.Digest {
			t.Errorf("%s changed nothing in the digest", what)
		}
	}
	other, err := artifact.Build("apps/prod/shop/web/worker", folder())
	if err != nil {
		t.Fatal(err)
	}
	if other.Digest == a.Digest {
		t.Error("two folders with the same files have one digest")
	}
	if !strings.HasPrefix(a.Tag(), "sha256-") || len(a.Tag()) != 71 {
		t.Errorf("tag %q", a.Tag())
	}
	// The layer unpacks to the files, byte for byte.
	got, err := artifact.Unpack(bytes.NewReader(a.Layer))
	if err != nil {
		t.Fatal(err)
	}
	want := folder()
	slices.SortFunc(want, func(x, y artifact.File) int { return strings.Compare(x.Name, y.Name) })
	if !equalFiles(got, want) {
		t.Fatalf("unpacked %v, want %v", got, want)
	}
}

func TestBuildRejectsBadNames(t *testing.T) {
	for _, n := range []string{"", "/abs", "../up", "a/../b", "./x", "."} {
		if _, err := artifact.Build("dir", []artifact.File{{Name: n}}); err == nil {
			t.Errorf("%q: no error", n)
		}
	}
	if _, err := artifact.Build("dir", []artifact.File{{Name: "a"}, {Name: "a"}}); err == nil {
		t.Error("a name twice: no error")
	}
}

func TestPushAndPull(t *testing.T) {
	reg := registrytest.New(t, registrytest.Options{Username: "fleet", Password: "s3cret"})
	auth := remote.WithAuth(&authn.Basic{Username: "fleet", Password: "s3cret"})
	repo := reg.Host() + "/fleet/artifacts"
	var arts []*artifact.Artifact
	for _, dir := range []string{"apps/a/p/x/api", "apps/a/p/x/web", "apps/a/p/y/api"} {
		a, err := artifact.Build(dir, folder())
		if err != nil {
			t.Fatal(err)
		}
		arts = append(arts, a)
	}
	ctx := t.Context()
	res, err := artifact.Push(ctx, repo, append(arts, arts[0]), artifact.PushOptions{Remote: []remote.Option{auth}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pushed != 3 || res.Present != 0 {
		t.Fatalf("first push: %+v", res)
	}
	// A second push of the same artifacts uploads nothing.
	reg.Reset()
	res, err = artifact.Push(ctx, repo, arts, artifact.PushOptions{Remote: []remote.Option{auth}, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pushed != 0 || res.Present != 3 || len(reg.Writes()) != 0 {
		t.Fatalf("second push: %+v, writes %v", res, reg.Writes())
	}
	// What the registry serves under the digest is the folder.
	for _, a := range arts {
		files, err := artifact.Pull(ctx, repo+"@"+a.Digest.String(), nil, auth)
		if err != nil {
			t.Fatal(err)
		}
		want := folder()
		slices.SortFunc(want, func(x, y artifact.File) int { return strings.Compare(x.Name, y.Name) })
		if !equalFiles(files, want) {
			t.Fatalf("%s: pulled %v", a.Title, files)
		}
		// And the tag names the same manifest.
		d, err := remote.Head(mustRef(t, repo+":"+a.Tag()), auth)
		if err != nil || d.Digest != a.Digest {
			t.Fatalf("tag %s: %v, %v", a.Tag(), d, err)
		}
	}
	missing, err := artifact.Build("apps/a/p/z/api", folder())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Pull(ctx, repo+"@"+missing.Digest.String(), nil, auth); !errors.Is(err, artifact.ErrNotFound) {
		t.Fatalf("pull of a missing artifact: %v", err)
	}
	// Without credentials the push fails and says where.
	if _, err := artifact.Push(ctx, repo, []*artifact.Artifact{missing}, artifact.PushOptions{}); err == nil || !strings.Contains(err.Error(), "apps/a/p/z/api") {
		t.Fatalf("push without credentials: %v", err)
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func equalFiles(a, b []artifact.File) bool {
	return slices.EqualFunc(a, b, func(x, y artifact.File) bool { return x.Name == y.Name && bytes.Equal(x.Data, y.Data) })
}

// BenchmarkBuild packs a component folder of the usual size (a
// kustomization.yaml and three objects, about 4 KB): what render adds per
// component with fleet.artifacts.
func BenchmarkBuild(b *testing.B) {
	obj := bytes.Repeat([]byte("spec:\n  replicas: 2\n  template: {}\n"), 30)
	files := []artifact.File{
		{Name: "kustomization.yaml", Data: []byte("resources:\n- deployment-web.yaml\n- service-web.yaml\n- ingress-web.yaml\n")},
		{Name: "deployment-web.yaml", Data: obj}, {Name: "service-web.yaml", Data: obj}, {Name: "ingress-web.yaml", Data: obj},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := artifact.Build("apps/c/p/a/web", files); err != nil {
			b.Fatal(err)
		}
	}
}

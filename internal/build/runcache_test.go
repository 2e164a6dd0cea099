package build

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

const cacheDockerfile = `FROM BASE
RUN head -c 16 /dev/urandom | od -An -tx1 > /random && echo ran-random
COPY app.txt /app.txt
RUN cat /app.txt /random > /combined
`

// newRunner is a content-addressed builder as a fresh CI runner has it:
// its own, empty, work and cache folders.
func (re *runTestEnv) newRunner(t testing.TB) Builder {
	t.Helper()
	b, err := New(Config{Registry: re.reg, Local: LocalOptions{WorkDir: runWorkDir(t), CacheDir: t.TempDir(), Init: sandboxInitProgram(t)}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func layerDigests(t testing.TB, ref string) []string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range layers {
		d, _ := l.Digest()
		out = append(out, d.String())
	}
	return out
}

// TestRunLayerCache: a runner that never built the image reuses the RUN
// layers the registry's cache manifest holds; an unchanged build is one
// HEAD and no write.
func TestRunLayerCache(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{})
	root := re.context(t, cacheDockerfile, map[string]tfile{"app.txt": {body: "v1\n"}})
	req := Request{Root: root, Repo: re.host + "/shop/cached", Platforms: []string{platformString(hostPlatform())}, SourceDateEpoch: 1}
	ctx := context.Background()

	first, err := re.newRunner(t).Build(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := re.reg.Digest(ctx, req.Repo+":"+CacheTag); err != nil {
		t.Fatalf("no cache manifest after the first build: %v", err)
	}
	firstLayers := layerDigests(t, first.Ref)

	// A change below the second RUN: the first RUN's layer comes from the
	// cache (its random bytes are the first build's), the second runs.
	if err := os.WriteFile(root+"/app.txt", []byte("v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	second, err := re.newRunner(t).Build(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if second.Tag == first.Tag {
		t.Fatal("the content tag did not change")
	}
	secondLayers := layerDigests(t, second.Ref)
	if secondLayers[1] != firstLayers[1] {
		t.Errorf("the first RUN ran again on a fresh runner: layer %s, cached %s", secondLayers[1], firstLayers[1])
	}
	if secondLayers[3] == firstLayers[3] {
		t.Errorf("the second RUN's layer did not change with its input")
	}
	files := pull(t, second.Ref, time.Unix(1, 0))[0].Files
	if !strings.HasPrefix(files["/combined"].Content, "v2\n") || files["/random"].Content == "" ||
		!strings.HasSuffix(files["/combined"].Content, files["/random"].Content) {
		t.Errorf("the second build's files: /combined %q, /random %q", files["/combined"].Content, files["/random"].Content)
	}

	// Back to v1 on yet another runner: both RUNs are cache hits, so the
	// image is the first one again, pushed under its tag as it was.
	if err := os.WriteFile(root+"/app.txt", []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	re.srv.Reset()
	again, err := re.newRunner(t).Build(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Reused || again.Ref != first.Ref {
		t.Errorf("unchanged build = %+v, want the first image reused", again)
	}
	var heads int
	for _, r := range re.srv.Requests() {
		switch {
		case r.Method == "HEAD":
			heads++
		case r.Method != "GET" || r.Path != "/v2/":
			t.Errorf("an unchanged build sent %s %s", r.Method, r.Path)
		}
	}
	if heads != 1 {
		t.Errorf("an unchanged build sent %d HEADs, want 1", heads)
	}
}

// TestRunLayerCacheRebuild: with the tag gone (a registry cleanup), every
// RUN is a cache hit and the same digest is pushed again.
func TestRunLayerCacheRebuild(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{})
	root := re.context(t, cacheDockerfile, map[string]tfile{"app.txt": {body: "v1\n"}})
	req := Request{Root: root, Repo: re.host + "/shop/rebuilt", Platforms: []string{platformString(hostPlatform())}, SourceDateEpoch: 1}
	first, err := re.buildRun(t, root, func(r *Request) { *r = req; r.Tag = "one" })
	if err != nil {
		t.Fatal(err)
	}
	second, err := re.buildRun(t, root, func(r *Request) { *r = req; r.Tag = "two" })
	if err != nil {
		t.Fatal(err)
	}
	if first.Digest != second.Digest {
		t.Errorf("a rebuild from the cache gave %s, want %s", second.Digest, first.Digest)
	}
	if n := strings.Count(re.output.String(), "ran-random\n"); n != 1 {
		t.Errorf("the first RUN ran %d times, want once: %q", n, re.output)
	}
	if !strings.Contains(re.output.String(), "Dockerfile:2: RUN head -c 16 /dev/urandom | od -An -tx1 > /random && echo r… (from the layer cache)\n") {
		t.Errorf("the output does not say the RUN came from the cache:\n%s", re.output)
	}
}

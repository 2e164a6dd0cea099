package build

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const goDockerfile = `# syntax=docker/dockerfile:1
ARG BASE=REGISTRY/base/multi:v1

FROM ${BASE} AS build
WORKDIR /src
COPY go.mod main.go ./
COPY bin/ /out/

FROM scratch
ARG VERSION=dev
ARG TARGETARCH
LABEL org.opencontainers.image.version=$VERSION arch=${TARGETARCH}
ENV APP_ENV=production PORT=8080
COPY --from=build /etc/passwd /etc/group /etc/
COPY --from=build /out/app /usr/local/bin/app
COPY --from=build --chown=app:staff /src/ /src/
COPY --from=build /etc/arch /etc/arch
USER 1000:1000
WORKDIR /data
EXPOSE 8080 9090/udp
ENTRYPOINT ["/usr/local/bin/app"]
CMD ["serve", "--port", "${PORT}"]
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --retries=2 CMD ["/usr/local/bin/app", "health"]
`

func goContext(t testing.TB, host string) string {
	root := t.TempDir()
	writeTree(t, root, map[string]tfile{
		"Dockerfile":    {body: strings.ReplaceAll(goDockerfile, "REGISTRY", host)},
		".dockerignore": {body: "*.log\ntmp/\n"},
		"go.mod":        {body: "module example.com/app\n"},
		"main.go":       {body: "package main\n\nfunc main() {}\n"},
		"bin/app":       {body: "\x7fELF fake binary", mode: 0o755},
		"debug.log":     {body: "ignored"},
		"tmp/cache":     {body: "ignored"},
	})
	return root
}

func TestMultiStageBuild(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.seedBases(t)
	root := goContext(t, e.host)
	const epoch = 1700000000
	res, err := e.build(t, Request{Root: root, BuildArgs: map[string]string{"VERSION": "1.2.3"}, SourceDateEpoch: epoch})
	if err != nil {
		t.Fatal(err)
	}
	if want := e.host + "/shop/api-web:" + res.Tag + "@" + res.Digest; res.Ref != want {
		t.Errorf("Ref = %q, want %q", res.Ref, want)
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, res.Platforms); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
	et := time.Unix(epoch, 0).UTC()
	images := pull(t, res.Ref, et)
	if len(images) != 2 {
		t.Fatalf("pulled %d images, want 2", len(images))
	}
	for _, img := range images {
		arch := strings.TrimPrefix(img.Platform, "linux/")
		want := map[string]pulledFile{
			"/usr":               {Mode: "drwxr-xr-x", Owner: "0:0"},
			"/usr/local":         {Mode: "drwxr-xr-x", Owner: "0:0"},
			"/usr/local/bin":     {Mode: "drwxr-xr-x", Owner: "0:0"},
			"/usr/local/bin/app": {Mode: "-rwxr-xr-x", Owner: "0:0", Content: "\x7fELF fake binary"},
			"/src":               {Mode: "drwxr-xr-x", Owner: "1000:50"},
			"/src/go.mod":        {Mode: "-rw-r--r--", Owner: "1000:50", Content: "module example.com/app\n"},
			"/src/main.go":       {Mode: "-rw-r--r--", Owner: "1000:50", Content: "package main\n\nfunc main() {}\n"},
			"/etc":               {Mode: "drwxr-xr-x", Owner: "0:0"},
			"/etc/arch":          {Mode: "-rw-r--r--", Owner: "0:0", Content: arch + "\n"},
			"/etc/passwd":        {Mode: "-rw-r--r--", Owner: "0:0", Content: passwd},
			"/etc/group":         {Mode: "-rw-r--r--", Owner: "0:0", Content: group},
		}
		if diff := cmp.Diff(want, img.Files); diff != "" {
			t.Errorf("%s files (-want +got):\n%s", img.Platform, diff)
		}
		wantCfg := v1.Config{
			Env:          []string{"PATH=" + defaultPath, "APP_ENV=production", "PORT=8080"},
			Entrypoint:   []string{"/usr/local/bin/app"},
			Cmd:          []string{"serve", "--port", "${PORT}"},
			User:         "1000:1000",
			WorkingDir:   "/data",
			ExposedPorts: map[string]struct{}{"8080/tcp": {}, "9090/udp": {}},
			Labels:       map[string]string{"org.opencontainers.image.version": "1.2.3", "arch": arch},
			StopSignal:   "SIGTERM",
			Healthcheck:  &v1.HealthConfig{Test: []string{"CMD", "/usr/local/bin/app", "health"}, Interval: 30 * time.Second, Retries: 2},
		}
		if diff := cmp.Diff(wantCfg, img.Config); diff != "" {
			t.Errorf("%s config (-want +got):\n%s", img.Platform, diff)
		}
		if !img.Created.Equal(et) {
			t.Errorf("created %v, want %v", img.Created, et)
		}
		if img.MediaType != types.OCIManifestSchema1 {
			t.Errorf("media type %s, want OCI", img.MediaType)
		}
	}
	goldenJSON(t, "multistage.golden", images)
	checkMTimes(t, res.Ref, et, 0)
}

func TestReproducibleDigests(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.seedBases(t)
	root := goContext(t, e.host)
	req := Request{Root: root, SourceDateEpoch: 1}
	tag1, err := ContentTag(req)
	if err != nil {
		t.Fatal(err)
	}
	first, err := e.build(t, req)
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.build(t, req)
	if err != nil {
		t.Fatal(err)
	}
	if first.Digest != second.Digest {
		t.Errorf("same inputs, different digests: %s and %s", first.Digest, second.Digest)
	}

	// An ignored file changes neither the tag nor the image.
	writeTree(t, root, map[string]tfile{"debug.log": {body: "something else"}, "tmp/new": {body: "x"}})
	tag2, err := ContentTag(req)
	if err != nil {
		t.Fatal(err)
	}
	ignored, err := e.build(t, req)
	if err != nil {
		t.Fatal(err)
	}
	if tag2 != tag1 || ignored.Digest != first.Digest {
		t.Errorf("changing an ignored file changed tag %s→%s or digest %s→%s", tag1, tag2, first.Digest, ignored.Digest)
	}

	// One changed source file changes both.
	writeTree(t, root, map[string]tfile{"main.go": {body: "package main\n\nfunc main() { println() }\n"}})
	tag3, err := ContentTag(req)
	if err != nil {
		t.Fatal(err)
	}
	changed, err := e.build(t, req)
	if err != nil {
		t.Fatal(err)
	}
	if tag3 == tag1 || changed.Digest == first.Digest {
		t.Errorf("changing main.go kept tag %s or digest %s", tag3, changed.Digest)
	}
	if len(tag1) != TagLength || strings.Trim(tag1, "0123456789abcdef") != "" {
		t.Errorf("tag %q is not %d hex digits", tag1, TagLength)
	}

	// Build arguments, target and platforms are inputs too.
	for _, r := range []Request{
		{Root: root, BuildArgs: map[string]string{"VERSION": "2"}},
		{Root: root, Target: "build"},
		{Root: root, Platforms: []string{"linux/amd64"}},
	} {
		tag, err := ContentTag(r)
		if err != nil {
			t.Fatal(err)
		}
		if tag == tag3 {
			t.Errorf("%+v: same tag as the plain request", r)
		}
	}
}

func TestSecondBuildPushesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.seedBases(t)
	root := goContext(t, e.host)
	b, err := New(Config{Registry: e.reg})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Root: root, Repo: e.host + "/shop/api-web"}
	e.srv.Reset()
	first, err := b.Build(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if first.Reused || len(e.srv.Writes()) == 0 {
		t.Fatalf("first build: reused=%v, %d writes; want a push", first.Reused, len(e.srv.Writes()))
	}
	tag, _ := ContentTag(req)
	if first.Tag != tag {
		t.Errorf("tag %s, want the content tag %s", first.Tag, tag)
	}
	e.srv.Reset()
	second, err := b.Build(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Reused || second.Ref != first.Ref {
		t.Errorf("second build = %+v, want the first's ref %s reused", second, first.Ref)
	}
	for _, r := range e.srv.Requests() {
		if r.Method != "GET" && r.Method != "HEAD" {
			t.Errorf("second build sent %s %s", r.Method, r.Path)
		}
	}
	if n := len(e.srv.Requests()); n == 0 || n > 3 {
		t.Errorf("second build made %d requests, want a ping and a HEAD", n)
	}
}

func TestUnsupportedInstructions(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.seedBases(t)
	tests := []struct {
		name       string
		dockerfile string
		want       string
	}{
		{"ssh mount", "FROM scratch\n\n# build it\nCOPY . /src\nWORKDIR /src\n\nRUN --mount=type=ssh make\n", "Dockerfile:7: RUN --mount=type=ssh is not supported by the built-in builder; configure build.external in platform.yaml"},
		{"ssh mount in a needed stage", "FROM scratch AS a\nRUN --mount=type=ssh x\nFROM scratch\nCOPY --from=a /x /x\n", "Dockerfile:2: RUN --mount=type=ssh is not supported"},
		{"add url", "FROM scratch\nADD https://example.com/x.tgz /x\n", "Dockerfile:2: ADD <url> needs a container runtime"},
		{"add git", "FROM scratch\nADD git@github.com:o/r.git /r\n", "Dockerfile:2: ADD <git repository> needs a container runtime"},
		{"copy parents", "FROM scratch\nCOPY --parents a/b /x/\n", "Dockerfile:2: COPY --parents is not supported"},
		{"onbuild trigger", "FROM REGISTRY/base/onbuild:v1\n", "Dockerfile:1: FROM REGISTRY/base/onbuild:v1 inherits ONBUILD triggers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeTree(t, root, map[string]tfile{"Dockerfile": {body: strings.ReplaceAll(tt.dockerfile, "REGISTRY", e.host)}})
			_, err := e.build(t, Request{Root: root})
			var ue *UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want *UnsupportedError", err)
			}
			if want := strings.ReplaceAll(tt.want, "REGISTRY", e.host); !strings.Contains(err.Error(), want) {
				t.Errorf("err = %q, want it to contain %q", err, want)
			}
		})
	}
}

func TestUnusedStageWithRunIsSkipped(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	root := t.TempDir()
	writeTree(t, root, map[string]tfile{
		"Dockerfile": {body: "FROM scratch AS test\nRUN go test ./...\n\nFROM scratch\nCOPY a /a\n"},
		"a":          {body: "a"},
	})
	res, err := e.build(t, Request{Root: root, Platforms: []string{"linux/amd64"}})
	if err != nil {
		t.Fatal(err)
	}
	img := pull(t, res.Ref, time.Unix(0, 0))[0]
	if got := img.Files["/a"].Content; got != "a" {
		t.Errorf("/a = %q", got)
	}
	// The RUN stage is the target only when asked for; there, RUN finds
	// no shell on scratch.
	needRun(t)
	_, err = e.build(t, Request{Root: root, Target: "test"})
	var re *RunError
	if !errors.As(err, &re) || re.Line != 2 || re.ExitCode != 127 {
		t.Errorf("target test: err = %v, want RUN at line 2 failing with 127", err)
	}
}

func TestPlatforms(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.seedBases(t)
	tests := []struct {
		name       string
		dockerfile string
		platforms  []string
		want       []string
		wantErr    string
	}{
		{"scratch gets the defaults", "FROM scratch\nCOPY a /a\n", nil, []string{"linux/amd64", "linux/arm64"}, ""},
		{"scratch gets what is asked", "FROM scratch\nCOPY a /a\n", []string{"linux/arm/v7", "linux/amd64", "linux/arm/v7"}, []string{"linux/arm/v7", "linux/amd64"}, ""},
		{"index base", "FROM REGISTRY/base/multi:v1\n", nil, []string{"linux/amd64", "linux/arm64"}, ""},
		{"single-platform base narrows the defaults", "FROM REGISTRY/base/amd64:v1\n", nil, []string{"linux/amd64"}, ""},
		{"single-platform base refuses an explicit request", "FROM REGISTRY/base/amd64:v1\n", []string{"linux/amd64", "linux/arm64"}, nil, "Dockerfile:1: REGISTRY/base/amd64:v1 has no image for linux/arm64 (it has linux/amd64)"},
		{"index base lacks a platform", "FROM REGISTRY/base/multi:v1\n", []string{"linux/s390x"}, nil, "has no image for linux/s390x (it has linux/amd64, linux/arm64/v8)"},
		{"copy from image", "FROM scratch\nCOPY --from=REGISTRY/base/multi:v1 /etc/arch /arch\n", nil, []string{"linux/amd64", "linux/arm64"}, ""},
		{"from --platform", "FROM --platform=$BUILDPLATFORM REGISTRY/base/amd64:v1 AS b\nFROM scratch\nCOPY --from=b /etc/group /g\n", nil, []string{"linux/amd64", "linux/arm64"}, ""},
		{"missing base", "FROM REGISTRY/base/none:v1\n", nil, nil, "Dockerfile:1: REGISTRY/base/none:v1: image not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeTree(t, root, map[string]tfile{"Dockerfile": {body: strings.ReplaceAll(tt.dockerfile, "REGISTRY", e.host)}, "a": {body: "a"}})
			res, err := e.build(t, Request{Root: root, Platforms: tt.platforms})
			if tt.wantErr != "" {
				if want := strings.ReplaceAll(tt.wantErr, "REGISTRY", e.host); err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, img := range pull(t, res.Ref, time.Unix(0, 0)) {
				got = append(got, img.Platform)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pulled platforms (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, res.Platforms); diff != "" {
				t.Errorf("result platforms (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPathEscapeRefused(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	outside := t.TempDir()
	writeTree(t, outside, map[string]tfile{"secret": {body: "s3cret"}, "Dockerfile": {body: "FROM scratch\n"}, "dir/x": {body: "x"}})
	tests := []struct {
		name  string
		files map[string]tfile
		req   Request
	}{
		{"context above root", map[string]tfile{"Dockerfile": {body: "FROM scratch\n"}}, Request{Context: ".."}},
		{"context link out", map[string]tfile{"ctx": {link: outside}}, Request{Context: "ctx"}},
		{"dockerfile link out", map[string]tfile{"Dockerfile": {link: outside + "/Dockerfile"}}, Request{}},
		{"dockerfile above root", map[string]tfile{"a": {body: "a"}}, Request{Dockerfile: "../Dockerfile"}},
		{"copy dotdot", map[string]tfile{"app/Dockerfile": {body: "FROM scratch\nCOPY ../secret /s\n"}, "secret": {body: "x"}}, Request{Context: "app"}},
		{"copy link out", map[string]tfile{"Dockerfile": {body: "FROM scratch\nCOPY s /s\n"}, "s": {link: outside + "/secret"}}, Request{}},
		{"copy dir link out", map[string]tfile{"Dockerfile": {body: "FROM scratch\nCOPY d /d\n"}, "d": {link: outside + "/dir"}}, Request{}},
		{"copy link to sibling of context", map[string]tfile{"app/Dockerfile": {body: "FROM scratch\nCOPY s /s\n"}, "app/s": {link: "../other"}, "other": {body: "o"}}, Request{Context: "app"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeTree(t, root, tt.files)
			req := tt.req
			req.Root = root
			_, err := e.build(t, req)
			if !errors.Is(err, ErrOutsideRoot) {
				t.Fatalf("err = %v, want ErrOutsideRoot", err)
			}
			_, err = ContentTag(req)
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error shows file content: %v", err)
			}
		})
	}
	if len(e.srv.Writes()) != 0 {
		t.Errorf("refused builds pushed: %v", e.srv.Writes())
	}
}

func TestLinksInsideContextAreCopiedAsLinks(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	root := t.TempDir()
	writeTree(t, root, map[string]tfile{
		"Dockerfile":        {body: "FROM scratch\nCOPY site /site\nCOPY current /cur\n"},
		"site/index.html":   {body: "<h1>"},
		"site/latest":       {link: "index.html"},
		"site/etc-passwd":   {link: "/etc/passwd"},
		"releases/v1/notes": {body: "v1"},
		"current":           {link: "releases/v1"},
	})
	res, err := e.build(t, Request{Root: root, Platforms: []string{"linux/amd64"}})
	if err != nil {
		t.Fatal(err)
	}
	files := pull(t, res.Ref, time.Unix(0, 0))[0].Files
	want := map[string]pulledFile{
		"/site":            {Mode: "drwxr-xr-x", Owner: "0:0"},
		"/site/index.html": {Mode: "-rw-r--r--", Owner: "0:0", Content: "<h1>"},
		"/site/latest":     {Mode: "Lrwxrwxrwx", Owner: "0:0", Link: "index.html"},
		"/site/etc-passwd": {Mode: "Lrwxrwxrwx", Owner: "0:0", Link: "/etc/passwd"},
		"/cur":             {Mode: "drwxr-xr-x", Owner: "0:0"},
		"/cur/notes":       {Mode: "-rw-r--r--", Owner: "0:0", Content: "v1"},
	}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

var _ = fs.ModeDir

// A stage's own files are read from memory: copying them to the final
// stage does not download the stage's base image layers.
func TestCopyFromStageSkipsBaseLayers(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.seedBases(t)
	idx, err := e.reg.Get(context.Background(), e.host+"/base/multi:v1")
	if err != nil {
		t.Fatal(err)
	}
	index, _ := idx.ImageIndex()
	im, _ := index.IndexManifest()
	baseLayers := map[string]bool{}
	for _, m := range im.Manifests {
		img, _ := index.Image(m.Digest)
		ls, _ := img.Layers()
		for _, l := range ls {
			d, _ := l.Digest()
			baseLayers["/v2/base/multi/blobs/"+d.String()] = true
		}
	}
	root := t.TempDir()
	writeTree(t, root, map[string]tfile{
		"Dockerfile": {body: "FROM " + e.host + "/base/multi:v1 AS build\nCOPY bin/app /out/app\nFROM scratch\nCOPY --from=build /out/app /app\n"},
		"bin/app":    {body: "binary", mode: 0o755},
	})
	e.srv.Reset()
	res, err := e.build(t, Request{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range e.srv.Requests() {
		if baseLayers[r.Path] {
			t.Errorf("fetched a base layer: %s %s", r.Method, r.Path)
		}
	}
	if got := pull(t, res.Ref, time.Unix(0, 0))[1].Files["/app"].Content; got != "binary" {
		t.Errorf("/app = %q", got)
	}
}

func TestUnreachableBaseNamesImage(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	gone := newTestEnv(t)
	host := gone.host
	gone.srv.Close()
	root := t.TempDir()
	writeTree(t, root, map[string]tfile{"Dockerfile": {body: "FROM scratch AS a\n\nFROM " + host + "/base/multi:v1\n"}})
	_, err := e.build(t, Request{Root: root})
	want := "Dockerfile:3: " + host + "/base/multi:v1: registry " + host + " unreachable"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v, want it to start with %q", err, want)
	}
}

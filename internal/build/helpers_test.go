package build

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
)

// helperEnv selects a fake build program when the test binary runs as one.
const helperEnv = "FLEETWRIGHT_BUILD_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		code := m.Run()
		if sandboxInitOnce.dir != "" {
			os.RemoveAll(sandboxInitOnce.dir)
		}
		os.Exit(code)
	case "external":
		os.Exit(fakeExternal(os.Args[1:]))
	case "pack":
		os.Exit(fakePack(os.Args[1:]))
	default:
		fmt.Fprintln(os.Stderr, "unknown helper")
		os.Exit(2)
	}
}

// testEnv is a registry on loopback with a client and a local builder.
type testEnv struct {
	tags  atomic.Int64
	srv   *registrytest.Server
	host  string
	reg   *registry.Client
	local *Local
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	srv := registrytest.New(t, registrytest.Options{})
	reg := registry.New(registry.Options{})
	local, err := NewLocal(LocalOptions{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{srv: srv, host: srv.Host(), reg: reg, local: local}
}

// tfile is a file for a test tree or a test layer.
type tfile struct {
	body string
	mode fs.FileMode // 0 means 0644; fs.ModeDir for a directory
	link string      // symbolic link target
	uid  int
	gid  int
}

// writeTree writes files under dir.
func writeTree(t testing.TB, dir string, files map[string]tfile) {
	t.Helper()
	for _, p := range slices.Sorted(mapsKeys(files)) {
		f := files[p]
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case f.link != "":
			if err := os.Symlink(f.link, full); err != nil {
				t.Fatal(err)
			}
		case f.mode.IsDir():
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
		default:
			mode := f.mode
			if mode == 0 {
				mode = 0o644
			}
			if err := os.WriteFile(full, []byte(f.body), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(full, mode); err != nil { // not subject to umask
				t.Fatal(err)
			}
		}
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// tarLayer makes a layer from files (paths without a leading slash).
func tarLayer(t testing.TB, files map[string]tfile) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range slices.Sorted(mapsKeys(files)) {
		f := files[p]
		h := &tar.Header{Name: p, Mode: 0o644, Uid: f.uid, Gid: f.gid, ModTime: time.Unix(1, 0)}
		switch {
		case f.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.link
		case f.mode.IsDir():
			h.Typeflag, h.Mode, h.Name = tar.TypeDir, 0o755, p+"/"
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.body))
			if f.mode != 0 {
				h.Mode = int64(f.mode.Perm())
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(f.body))
		}
	}
	tw.Close()
	l, err := newMemLayer(buf.Bytes(), types.DockerLayer)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// baseImage makes a Docker-type image for platform p from layers.
func makeImage(t testing.TB, p v1.Platform, cfg v1.Config, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config = cfg
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

const passwd = "root:x:0:0:root:/root:/bin/sh\n# comment\napp:x:1000:1000::/home/app:/bin/sh\nweb:x:1001:50::/srv:/bin/false\n"
const group = "root:x:0:\nstaff:x:50:\napp:x:1000:\n"

// seedBases pushes the base images tests build on:
//   - base/multi:v1, an index for linux/amd64 and linux/arm64, with users,
//     a whiteout, and /lib as a link to usr/lib;
//   - base/amd64:v1, one linux/amd64 image;
//   - base/onbuild:v1, an image with an ONBUILD trigger.
func (e *testEnv) seedBases(t testing.TB) {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, p := range []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64", Variant: "v8"}} {
		l1 := tarLayer(t, map[string]tfile{
			"etc":              {mode: fs.ModeDir},
			"etc/passwd":       {body: passwd},
			"etc/group":        {body: group},
			"etc/arch":         {body: p.Architecture + "\n"},
			"opt":              {mode: fs.ModeDir},
			"opt/old.txt":      {body: "old"},
			"opt/keep.txt":     {body: "keep", uid: 7, gid: 8},
			"usr/lib/libx.so":  {body: "lib-" + p.Architecture, mode: 0o755},
			"lib":              {link: "usr/lib"},
			"srv/www/index.md": {body: "# hi"},
		})
		l2 := tarLayer(t, map[string]tfile{
			"opt/.wh.old.txt": {},
			"opt/new.txt":     {body: "new"},
		})
		img := makeImage(t, p, v1.Config{
			Env:        []string{"PATH=/usr/bin:/bin", "BASE_ENV=base"},
			Cmd:        []string{"/bin/sh"},
			WorkingDir: "/",
			Labels:     map[string]string{"base": "multi"},
		}, l1, l2)
		pp := p
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &pp, MediaType: types.DockerManifestSchema2}})
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.DockerManifestList), adds...)
	e.push(t, "base/multi:v1", idx)

	single := makeImage(t, v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Config{Env: []string{"PATH=/bin"}},
		tarLayer(t, map[string]tfile{"etc/passwd": {body: passwd}, "etc/group": {body: group}}))
	e.push(t, "base/amd64:v1", single)

	onbuild := makeImage(t, v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Config{OnBuild: []string{"RUN make"}},
		tarLayer(t, map[string]tfile{"x": {body: "x"}}))
	e.push(t, "base/onbuild:v1", onbuild)
}

func (e *testEnv) push(t testing.TB, repoTag string, obj any) {
	t.Helper()
	ref, err := name.ParseReference(e.host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	switch o := obj.(type) {
	case v1.Image:
		err = remote.Write(ref, o)
	case v1.ImageIndex:
		err = remote.WriteIndex(ref, o)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// pulledFile is one entry of a pulled image's filesystem.
type pulledFile struct {
	Mode    string
	Owner   string
	Content string `json:",omitempty"`
	Link    string `json:",omitempty"`
}

// pulled is what a test reads back of one platform's image.
type pulled struct {
	Platform  string
	Files     map[string]pulledFile
	Config    v1.Config
	Created   time.Time
	History   []string
	MediaType types.MediaType
}

// pull reads ref back from the registry: each platform's files (layers
// applied in order), config and history. It fails the test on any entry
// whose modification time is not epoch.
func pull(t testing.TB, ref string, epoch time.Time) []pulled {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(r)
	if err != nil {
		t.Fatal(err)
	}
	var out []pulled
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			t.Fatal(err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range im.Manifests {
			img, err := idx.Image(m.Digest)
			if err != nil {
				t.Fatal(err)
			}
			p := readImage(t, img, epoch)
			if got := normPlatform(*m.Platform); got != p.Platform {
				t.Errorf("index says %s, config says %s", got, p.Platform)
			}
			out = append(out, p)
		}
		return out
	}
	img, err := desc.Image()
	if err != nil {
		t.Fatal(err)
	}
	return []pulled{readImage(t, img, epoch)}
}

func readImage(t testing.TB, img v1.Image, epoch time.Time) pulled {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	mt, _ := img.MediaType()
	p := pulled{
		Platform:  normPlatform(v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}),
		Files:     map[string]pulledFile{},
		Config:    cf.Config,
		Created:   cf.Created.UTC(),
		MediaType: mt,
	}
	for _, h := range cf.History {
		p.History = append(p.History, h.CreatedBy)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		thisLayer := map[string]bool{}
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			pth := cleanAbs(h.Name)
			dir, base := filepath.Split(pth)
			if base == whiteoutOpaque {
				for k := range p.Files {
					if strings.HasPrefix(k, dir) && !thisLayer[k] {
						delete(p.Files, k)
					}
				}
				continue
			}
			thisLayer[pth] = true
			if strings.HasPrefix(base, whiteoutPrefix) {
				target := filepath.Join(dir, strings.TrimPrefix(base, whiteoutPrefix))
				for k := range p.Files {
					if k == target || strings.HasPrefix(k, target+"/") {
						delete(p.Files, k)
					}
				}
				continue
			}
			f := pulledFile{Mode: fmt.Sprintf("%v", fileMode(h)), Owner: fmt.Sprintf("%d:%d", h.Uid, h.Gid), Link: h.Linkname}
			if h.Typeflag == tar.TypeReg {
				b, _ := io.ReadAll(tr)
				f.Content = string(b)
			}
			p.Files[pth] = f
		}
		rc.Close()
	}
	return p
}

// ownMTimes checks that every entry of the images this build made (layers
// that are not the base's) has modification time epoch.
func checkMTimes(t testing.TB, ref string, epoch time.Time, skipLayers int) {
	t.Helper()
	r, _ := name.ParseReference(ref)
	desc, err := remote.Get(r)
	if err != nil {
		t.Fatal(err)
	}
	var imgs []v1.Image
	if desc.MediaType.IsIndex() {
		idx, _ := desc.ImageIndex()
		im, _ := idx.IndexManifest()
		for _, m := range im.Manifests {
			img, _ := idx.Image(m.Digest)
			imgs = append(imgs, img)
		}
	} else {
		img, _ := desc.Image()
		imgs = append(imgs, img)
	}
	for _, img := range imgs {
		layers, _ := img.Layers()
		for _, l := range layers[skipLayers:] {
			rc, _ := l.Uncompressed()
			tr := tar.NewReader(rc)
			var names []string
			for {
				h, err := tr.Next()
				if err != nil {
					break
				}
				names = append(names, h.Name)
				if !h.ModTime.Equal(epoch) {
					t.Errorf("%s: mtime %v, want %v", h.Name, h.ModTime, epoch)
				}
				if h.Uname != "" || h.Gname != "" {
					t.Errorf("%s: user or group name set", h.Name)
				}
			}
			rc.Close()
			if !sort.StringsAreSorted(names) {
				t.Errorf("layer entries not sorted: %v", names)
			}
		}
	}
}

// goldenJSON compares got, as indented JSON, with testdata/name,
// rewriting it under -update.
func goldenJSON(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	golden.File(t, filepath.Join("testdata", name), b)
}

// build runs the local builder with a fresh tag.
func (e *testEnv) build(t testing.TB, req Request) (Result, error) {
	t.Helper()
	if req.Repo == "" {
		req.Repo = e.host + "/shop/api-web"
	}
	if req.Tag == "" {
		req.Tag = fmt.Sprintf("t%d", e.tags.Add(1))
	}
	return e.local.Build(context.Background(), req)
}

// normPlatform writes p as requests name it (arm64's v8 variant dropped).
func normPlatform(p v1.Platform) string {
	n, err := parsePlatform(platformString(p))
	if err != nil {
		return platformString(p)
	}
	return platformString(n)
}

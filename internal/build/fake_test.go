package build

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// fakeExternal is a build command for tests: it pushes a one-layer image
// describing what it was asked to build, and reports the digest the way
// --format says.
func fakeExternal(args []string) int {
	fs := flag.NewFlagSet("fake-external", flag.ContinueOnError)
	image := fs.String("image", "", "")
	digestFile := fs.String("digest-file", "", "")
	format := fs.String("format", "bare", "bare, name, json, none or wrong")
	fail := fs.Bool("fail", false, "")
	var buildArgs multiFlag
	fs.Var(&buildArgs, "build-arg", "")
	target := fs.String("target", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fmt.Printf("fake builder: building %s\n", *image)
	if *fail {
		fmt.Fprintln(os.Stderr, "step 2/3: RUN make")
		fmt.Fprintln(os.Stderr, "make: *** [all] Error 1")
		return 1
	}
	wd, _ := os.Getwd()
	desc := []string{
		"image=" + *image,
		"target=" + *target,
		"cwd-is-context=" + fmt.Sprint(wd == os.Getenv("FLEETWRIGHT_CONTEXT")),
		"platforms=" + os.Getenv("FLEETWRIGHT_PLATFORMS"),
		"epoch=" + os.Getenv("SOURCE_DATE_EPOCH"),
	}
	desc = append(desc, buildArgs...)
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "FLEETWRIGHT_BUILD_ARG_") {
			desc = append(desc, "env:"+kv)
		}
	}
	sort.Strings(desc[5:])
	layer := static.NewLayer([]byte(strings.Join(desc, "\n")+"\n"), types.OCIUncompressedLayer)
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ref, err := name.ParseReference(*image)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := remote.Write(ref, img); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h, _ := img.Digest()
	var out string
	switch *format {
	case "bare":
		out = h.String() + "\n"
	case "name":
		out = ref.Context().Name() + "@" + h.String()
	case "json":
		out = fmt.Sprintf(`{"buildx.build.ref":"x","containerimage.digest":%q,"image.name":%q}`, h.String(), *image)
	case "wrong":
		out = "sha256:" + strings.Repeat("0", 64)
	case "none":
		return 0
	}
	if err := os.WriteFile(*digestFile, []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fakePack stands in for `pack build IMAGE --path DIR --publish ...`: it
// pushes an image holding the names of the files under DIR.
func fakePack(args []string) int {
	if len(args) < 2 || args[0] != "build" {
		fmt.Fprintln(os.Stderr, "usage: pack build IMAGE ...")
		return 2
	}
	image := args[1]
	fs := flag.NewFlagSet("fake-pack", flag.ContinueOnError)
	dir := fs.String("path", "", "")
	fs.Bool("publish", false, "")
	builder := fs.String("builder", "", "")
	var envs multiFlag
	fs.Var(&envs, "env", "")
	platform := fs.String("platform", "", "")
	if err := fs.Parse(args[2:]); err != nil {
		return 2
	}
	var files []string
	filepath.WalkDir(*dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(*dir, p)
			files = append(files, rel)
		}
		return nil
	})
	body := fmt.Sprintf("builder=%s\nplatform=%s\nenv=%s\nfiles=%s\n", *builder, *platform, strings.Join(envs, ","), strings.Join(files, ","))
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer([]byte(body), types.OCIUncompressedLayer))
	if err != nil {
		return 1
	}
	ref, err := name.ParseReference(image)
	if err != nil {
		return 1
	}
	if err := remote.Write(ref, img); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("Successfully built image", image)
	return 0
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

package main

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/fleetwright/fleetwright/internal/build"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
)

// busyboxImage is an image of Debian's static busybox with /bin/sh, for
// the host's platform.
func busyboxImage(t *testing.T) v1.Image {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("RUN tests need Linux and root (see docs/build.md)")
	}
	if err := canCreateNamespaces(); err != nil {
		t.Skipf("root cannot create namespaces here: %v", err)
	}
	bin, err := os.ReadFile("/bin/busybox")
	if err != nil {
		if os.Getenv(build.SkipRunEnv) != "1" {
			t.Fatalf("no /bin/busybox: install Debian's busybox-static (hack/test.sh does), or set %s=1 to skip the RUN tests", build.SkipRunEnv)
		}
		t.Skipf("no /bin/busybox and %s=1", build.SkipRunEnv)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bin))})
	tw.Write(bin)
	for _, a := range []string{"sh", "cat", "echo"} {
		tw.WriteHeader(&tar.Header{Name: "bin/" + a, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777})
	}
	tw.Close()
	layer, err := tarball.LayerFromReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Env = []string{"PATH=/bin"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestRenderBuildsRun: render builds a Dockerfile with RUN and a secret
// from platform.yaml or --build-secret; the secret is in no output; a
// second render writes nothing to the registry.
func TestRenderBuildsRun(t *testing.T) {
	t.Parallel()
	img := busyboxImage(t)
	reg := registrytest.New(t, registrytest.Options{})
	base := reg.Host() + "/base/busybox:v1"
	if err := crane.Push(img, base); err != nil {
		t.Fatal(err)
	}
	const token = "tok-5ecret-value"
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml":          "registry: " + reg.Host() + "/fleet\nbuild:\n  platforms: [linux/" + runtime.GOARCH + "]\n  secrets: [{id: token, env: BUILD_TOKEN, projects: [shop]}]\n",
		"apps/shop/web/app.yaml": "name: web\ncomponents: [{name: site, type: workload, workload_spec: {build_mode: dockerfile, port: 80}}]\n",
		"apps/shop/web/Dockerfile": "FROM " + base + "\n" +
			"RUN --mount=type=secret,id=token,env=TOKEN echo \"token of ${#TOKEN} bytes\" > /built && echo \"token=$TOKEN\"\n" +
			"ENTRYPOINT [\"/bin/cat\", \"/built\"]\n",
	})
	env := map[string]string{"SOURCE_DATE_EPOCH": "1700000000", "BUILD_TOKEN": token}
	out := filepath.Join(t.TempDir(), "fleet")
	r := runCmd(t, env, "--out", out, root)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, token) {
		t.Errorf("the secret is in render's output:\n%s", r.stderr)
	}
	if got := builtFile(t, reg.Host(), out); got != "token of 16 bytes\n" {
		t.Errorf("/built = %q", got)
	}

	reg.Reset()
	if r := runCmd(t, env, "--out", out, root); r.code != 0 || !strings.Contains(r.stderr, "0 updated") {
		t.Fatalf("second render: exit %d: %s", r.code, r.stderr)
	}
	if w := reg.Writes(); len(w) != 0 {
		t.Errorf("a render of unchanged sources wrote to the registry: %v", w)
	}

	// --build-secret wins over platform.yaml: a file of another length.
	secretFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(secretFile, []byte("short"), 0o600)
	golden.WriteFiles(t, root, map[string]string{"apps/shop/web/Dockerfile": strings.Replace(string(mustRead(t, filepath.Join(root, "apps/shop/web/Dockerfile"))), "bytes", "bytes!", 1)})
	r = runCmd(t, env, "--out", out, "--build-secret", "id=token,src="+secretFile, root)
	if r.code != 0 || strings.Contains(r.stderr, "short") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := builtFile(t, reg.Host(), out); got != "token of 5 bytes!\n" {
		t.Errorf("with --build-secret, /built = %q", got)
	}
	if r := runCmd(t, env, "--build-secret", "id=token", root); r.code == 0 || !strings.Contains(r.stderr, "--build-secret \"id=token\": want id=<id> and one of env=<variable> or src=<file>") {
		t.Errorf("a bad --build-secret: exit %d: %s", r.code, r.stderr)
	}
}

// builtFile reads /built from the top layer of the image the fleet at out
// runs for the site.
func builtFile(t *testing.T, host, out string) string {
	t.Helper()
	dep, _ := os.ReadFile(filepath.Join(out, "apps/default/shop/web/site/deployment-web-site.yaml"))
	m := regexp.MustCompile(`image: "?(` + regexp.QuoteMeta(host) + `/fleet/shop/web-site:[0-9a-f]+@sha256:[0-9a-f]{64})`).FindSubmatch(dep)
	if m == nil {
		t.Fatalf("the site is not built and pinned:\n%s", dep)
	}
	built, err := crane.Pull(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := built.Layers()
	var content bytes.Buffer
	rc, _ := layers[len(layers)-1].Uncompressed()
	defer rc.Close()
	tr := tar.NewReader(rc)
	for h, err := tr.Next(); err == nil; h, err = tr.Next() {
		if h.Name == "built" {
			content.ReadFrom(tr)
		}
	}
	return content.String()
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

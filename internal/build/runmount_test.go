package build

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestRunCacheMount: a cache mount keeps its content between builds and
// is never part of a layer.
func TestRunCacheMount(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{NoRegistryCache: true})
	df := "FROM BASE\n" +
		"RUN --mount=type=cache,id=counter,target=/var/cache/app n=$(cat /var/cache/app/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /var/cache/app/n; echo \"run $n\" > /runs\n" +
		"RUN --mount=type=cache,target=/root/.cache,sharing=locked,mode=0700,uid=1000 stat -c '%a %u' /root/.cache > /cache-mode\n" +
		"RUN --mount=type=cache,target=/srv/lib/cache echo kept > /srv/lib/keep\n"
	root := re.context(t, df, nil)
	for i, want := range []string{"run 1\n", "run 2\n"} {
		res, err := re.buildRun(t, root, nil)
		if err != nil {
			t.Fatalf("build %d: %v\n%s", i+1, err, re.output)
		}
		files := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files
		if got := files["/runs"].Content; got != want {
			t.Errorf("build %d: /runs = %q, want %q", i+1, got, want)
		}
		if got := files["/cache-mode"].Content; got != "700 1000\n" {
			t.Errorf("build %d: the cache folder is %q, want mode 700 owned by 1000", i+1, got)
		}
		for p := range files {
			if strings.HasPrefix(p, "/var") || strings.HasPrefix(p, "/root/.cache") || strings.HasPrefix(p, "/srv/lib/cache") {
				t.Errorf("build %d: the cache mount point %s is in the image", i+1, p)
			}
		}
		if files["/srv/lib/keep"].Content != "kept\n" || files["/srv/lib"].Mode != "drwxr-xr-x" {
			t.Errorf("build %d: what the RUN wrote beside a mount point is missing: %+v", i+1, files["/srv/lib/keep"])
		}
	}
	re.checkWorkDirEmpty(t)
}

// TestRunSecretMount: a secret, from the environment or a file, is there
// while RUN runs and in no layer, no cache record and no output.
func TestRunSecretMount(t *testing.T) {
	t.Parallel()
	const token = "s3cr3t-token-value"
	const fileSecret = "file-secret-contents\n"
	secretFile := filepath.Join(t.TempDir(), "npmrc")
	if err := os.WriteFile(secretFile, []byte(fileSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	re := newRunEnv(t, LocalOptions{
		Secrets:   map[string]SecretSource{"token": {Env: "BUILD_TOKEN"}, "npmrc": {File: secretFile}, "absent": {Env: "NOT_SET"}},
		LookupEnv: func(k string) (string, bool) { return map[string]string{"BUILD_TOKEN": token}[k], k == "BUILD_TOKEN" },
	})
	df := "FROM BASE\n" +
		"RUN --mount=type=secret,id=token sha256sum /run/secrets/token | cut -d' ' -f1 > /token.sum && cat /run/secrets/token && echo && stat -c '%a %u' /run/secrets/token\n" +
		"RUN --mount=type=secret,id=npmrc,target=/root/.npmrc,uid=1000,mode=0440 --mount=type=secret,id=token,env=TOKEN " +
		"cp /root/.npmrc /copy-is-allowed-but-not-here 2>/dev/null; rm -f /copy-is-allowed-but-not-here; echo \"token=$TOKEN\"; stat -c '%a %u' /root/.npmrc > /npmrc-mode; cat /root/.npmrc\n" +
		"RUN --mount=type=secret,id=absent test ! -e /run/secrets/absent && echo absent-ok\n"
	root := re.context(t, df, nil)
	res, err := re.buildRun(t, root, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, re.output)
	}
	files := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files
	sum := sha256.Sum256([]byte(token))
	if got := files["/token.sum"].Content; got != hex.EncodeToString(sum[:])+"\n" {
		t.Errorf("the RUN did not read the secret: /token.sum = %q", got)
	}
	if got := files["/npmrc-mode"].Content; got != "440 1000\n" {
		t.Errorf("secret file mode and owner: %q", got)
	}
	for p := range files {
		if strings.HasPrefix(p, "/run") || p == "/root/.npmrc" {
			t.Errorf("the secret's mount point %s is in the image", p)
		}
	}
	out := re.output.String()
	for _, want := range []string{secretMask + "\n400 0\n", "token=" + secretMask + "\n", "absent-ok\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	checkNoSecret(t, re, res.Ref, out, token, strings.TrimSpace(fileSecret))

	// A failing RUN's output tail is masked too; a required secret that
	// is not configured is an error.
	root = re.context(t, "FROM BASE\nRUN --mount=type=secret,id=token cat /run/secrets/token; exit 1\n", nil)
	_, err = re.buildRun(t, root, nil)
	var rerr *RunError
	if !errors.As(err, &rerr) || strings.Contains(err.Error()+rerr.BuildOutput(), token) || !strings.Contains(rerr.BuildOutput(), secretMask) {
		t.Errorf("failed RUN: %v\n%s", err, rerr.BuildOutput())
	}
	// A target below a link (/var/run -> /run) is mounted where the link
	// leads, inside the image.
	root = re.context(t, "FROM BASE\nRUN mkdir -p /var /run && ln -s /run /var/run\nRUN --mount=type=secret,id=token,target=/var/run/secrets/token wc -c < /var/run/secrets/token > /len\n", nil)
	res, err = re.buildRun(t, root, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, re.output)
	}
	if got := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files["/len"].Content; strings.TrimSpace(got) != "18" {
		t.Errorf("the secret below a link has %q bytes", got)
	}

	root = re.context(t, "FROM BASE\nRUN --mount=type=secret,id=absent,required true\n", nil)
	if _, err := re.buildRun(t, root, nil); err == nil || !strings.Contains(err.Error(), `Dockerfile:2: RUN: secret "absent" is required but not configured`) {
		t.Errorf("required secret: %v", err)
	}
}

// checkNoSecret fails when any blob of the repository of ref (layers,
// configs, manifests, the cache manifest), or the output, holds a value.
func checkNoSecret(t *testing.T, re *runTestEnv, ref, output string, values ...string) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	var blobs [][]byte
	for _, tag := range []string{r.Identifier(), CacheTag} {
		desc, err := remote.Get(r.Context().Tag(tag))
		if err != nil {
			if tag == CacheTag {
				continue
			}
			t.Fatal(err)
		}
		blobs = append(blobs, desc.Manifest)
		img, err := desc.Image()
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := img.RawConfigFile()
		blobs = append(blobs, cfg)
		layers, _ := img.Layers()
		for _, l := range layers {
			for _, open := range []func() (io.ReadCloser, error){l.Compressed, l.Uncompressed} {
				rc, err := open()
				if err != nil {
					continue // a cache config blob is no gzip stream
				}
				b, _ := io.ReadAll(rc)
				rc.Close()
				blobs = append(blobs, b)
			}
		}
	}
	for _, v := range values {
		for i, b := range blobs {
			if strings.Contains(string(b), v) {
				t.Errorf("blob %d of the repository holds the secret %q", i, v)
			}
		}
		if strings.Contains(output, v) {
			t.Errorf("the output holds the secret %q", v)
		}
	}
}

// TestRunBindMounts: bind mounts of another stage and of the context are
// readable, what a RUN writes there is dropped, and tmpfs is empty.
func TestRunBindMounts(t *testing.T) {
	t.Parallel()
	re := newRunEnv(t, LocalOptions{})
	df := `FROM BASE AS tools
RUN mkdir /tools && echo "tool v1" > /tools/version

FROM BASE
RUN --mount=type=bind,from=tools,source=/tools,target=/mnt/tools cat /mnt/tools/version > /version
RUN --mount=type=bind,source=conf,target=/conf cp /conf/app.conf /app.conf && ! touch /conf/x 2>/dev/null
RUN --mount=type=bind,source=.,target=/ctx,rw touch /ctx/written && ls -A /ctx > /ctx-list
RUN --mount=type=tmpfs,target=/scratch echo x > /scratch/f && ls /scratch > /scratch-list
`
	root := re.context(t, df, map[string]tfile{"conf/app.conf": {body: "port=80\n"}, ".dockerignore": {body: "secret.txt\n"}, "secret.txt": {body: "no"}})
	res, err := re.buildRun(t, root, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, re.output)
	}
	files := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files
	want := map[string]string{
		"/version":      "tool v1\n",
		"/app.conf":     "port=80\n",
		"/ctx-list":     ".dockerignore\nDockerfile\nconf\nwritten\n",
		"/scratch-list": "f\n",
	}
	for p, w := range want {
		if got := files[p].Content; got != w {
			t.Errorf("%s = %q, want %q", p, got, w)
		}
	}
	for p := range files {
		for _, mp := range []string{"/mnt", "/conf", "/ctx/", "/scratch/"} {
			if strings.HasPrefix(p, mp) {
				t.Errorf("%s of a mount is in the image", p)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "written")); err == nil {
		t.Errorf("a RUN wrote into the build context")
	}
}

// TestRunNetwork: RUN has only a loopback interface, which is up, unless
// the builder allows the host's network.
func TestRunNetwork(t *testing.T) {
	t.Parallel()
	const df = "FROM BASE\nRUN ip -o link | cut -d: -f2 | tr -d ' ' > /links && ip -o link show lo | grep -c UP > /lo-up\nRUN --network=none ip -o link | wc -l > /none\n"
	for _, tt := range []struct {
		network string
		links   func(string) bool
	}{
		{"none", func(s string) bool { return s == "lo\n" }},
		{"host", func(s string) bool { return strings.Count(s, "\n") > 1 }},
	} {
		t.Run(tt.network, func(t *testing.T) {
			t.Parallel()
			re := newRunEnv(t, LocalOptions{Network: tt.network})
			res, err := re.buildRun(t, re.context(t, df, nil), nil)
			if err != nil {
				t.Fatalf("%v\n%s", err, re.output)
			}
			files := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files
			if got := files["/links"].Content; !tt.links(got) {
				t.Errorf("links: %q", got)
			}
			if got := files["/lo-up"].Content; got != "1\n" {
				t.Errorf("lo up: %q", got)
			}
			if got := files["/none"].Content; got != "1\n" {
				t.Errorf("--network=none: %q links", got)
			}
		})
	}
}

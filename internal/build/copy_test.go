package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func tarGz(t testing.TB, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range []string{"pkg/", "pkg/bin/tool", "pkg/README", "pkg/link"} {
		body, ok := files[name]
		if !ok {
			continue
		}
		h := &tar.Header{Name: name, Mode: 0o644, Uid: 42, Gid: 43, ModTime: time.Unix(99, 0)}
		switch {
		case strings.HasSuffix(name, "/"):
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case strings.HasPrefix(body, "->"):
			h.Typeflag, h.Linkname = tar.TypeSymlink, strings.TrimPrefix(body, "->")
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(body))
			if strings.Contains(name, "bin/") {
				h.Mode = 0o755
			}
		}
		tw.WriteHeader(h)
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(body))
		}
	}
	tw.Close()
	zw.Close()
	return buf.String()
}

func TestCopy(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.seedBases(t)
	pkg := tarGz(t, map[string]string{"pkg/": "", "pkg/bin/tool": "#!/bin/sh\n", "pkg/README": "read me", "pkg/link": "->README"})
	var plain bytes.Buffer
	zw := gzip.NewWriter(&plain)
	zw.Write([]byte("just compressed text"))
	zw.Close()
	context := map[string]tfile{
		".dockerignore":    {body: "debug.log\n"},
		"a.txt":            {body: "a"},
		"b.txt":            {body: "b"},
		"c.md":             {body: "c"},
		"debug.log":        {body: "secret log"},
		"src/x":            {body: "x"},
		"src/sub/y":        {body: "y", mode: 0o600},
		"src/empty":        {mode: fs.ModeDir},
		"docs/guide.md":    {body: "g"},
		"docs/api.txt":     {body: "api"},
		"docs/old/old.md":  {body: "old"},
		"pkg.tar.gz":       {body: pkg},
		"notes.gz":         {body: plain.String()},
		"run.sh":           {body: "#!/bin/sh\n", mode: 0o755},
		"nested/a/b/c.txt": {body: "deep"},
	}
	d := func(owner string) pulledFile { return pulledFile{Mode: "drwxr-xr-x", Owner: owner} }
	f := func(content string) pulledFile { return pulledFile{Mode: "-rw-r--r--", Owner: "0:0", Content: content} }
	tests := []struct {
		name       string
		dockerfile string
		args       map[string]string
		target     string
		want       map[string]pulledFile
		exact      bool // want lists every file of the image
		absent     []string
		wantErr    string
	}{
		{
			name:       "glob into directory",
			dockerfile: "FROM scratch\nCOPY *.txt /docs/\n",
			want:       map[string]pulledFile{"/docs": d("0:0"), "/docs/a.txt": f("a"), "/docs/b.txt": f("b")},
			exact:      true,
		},
		{
			name:       "file to a file name",
			dockerfile: "FROM scratch\nCOPY a.txt /etc/renamed\n",
			want:       map[string]pulledFile{"/etc": d("0:0"), "/etc/renamed": f("a")},
			exact:      true,
		},
		{
			name:       "relative destination follows WORKDIR",
			dockerfile: "FROM scratch\nWORKDIR /app\nWORKDIR sub\nCOPY a.txt .\nCOPY run.sh ./bin/\n",
			want: map[string]pulledFile{"/app": d("0:0"), "/app/sub": d("0:0"), "/app/sub/a.txt": f("a"),
				"/app/sub/bin": d("0:0"), "/app/sub/bin/run.sh": {Mode: "-rwxr-xr-x", Owner: "0:0", Content: "#!/bin/sh\n"}},
			exact: true,
		},
		{
			name:       "directory contents",
			dockerfile: "FROM scratch\nCOPY src /dst\n",
			want: map[string]pulledFile{"/dst": d("0:0"), "/dst/x": f("x"), "/dst/sub": d("0:0"),
				"/dst/sub/y": {Mode: "-rw-------", Owner: "0:0", Content: "y"}, "/dst/empty": d("0:0")},
			exact: true,
		},
		{
			name:       "several sources make a directory",
			dockerfile: "FROM scratch\nCOPY a.txt b.txt /both\n",
			want:       map[string]pulledFile{"/both": d("0:0"), "/both/a.txt": f("a"), "/both/b.txt": f("b")},
			exact:      true,
		},
		{
			name:       "heredocs",
			dockerfile: "FROM scratch\nARG NAME=world\nCOPY <<EOF /etc/motd\nhello ${NAME}\nEOF\nCOPY <<'EOF' /etc/raw\nkeep ${NAME}\nEOF\n",
			want:       map[string]pulledFile{"/etc": d("0:0"), "/etc/motd": f("hello world\n"), "/etc/raw": f("keep ${NAME}\n")},
			exact:      true,
		},
		{
			name:       "chmod",
			dockerfile: "FROM scratch\nCOPY --chmod=0750 src/sub /s\nCOPY --chmod=640 run.sh /r\n",
			want: map[string]pulledFile{"/s": d("0:0"), "/s/y": {Mode: "-rwxr-x---", Owner: "0:0", Content: "y"},
				"/r": {Mode: "-rw-r-----", Owner: "0:0", Content: "#!/bin/sh\n"}},
			exact: true,
		},
		{
			name:       "exclude",
			dockerfile: "FROM scratch\nCOPY --exclude=*.md docs/ /d/\n", // like .dockerignore, * stops at /
			want:       map[string]pulledFile{"/d": d("0:0"), "/d/api.txt": f("api"), "/d/old": d("0:0"), "/d/old/old.md": f("old")},
			exact:      true,
		},
		{
			name:       "add unpacks a local archive",
			dockerfile: "FROM scratch\nADD pkg.tar.gz /opt/\nADD notes.gz /n.gz\n",
			want: map[string]pulledFile{
				"/opt": d("0:0"), "/opt/pkg": d("42:43"), "/opt/pkg/bin": d("0:0"),
				"/opt/pkg/bin/tool": {Mode: "-rwxr-xr-x", Owner: "42:43", Content: "#!/bin/sh\n"},
				"/opt/pkg/README":   {Mode: "-rw-r--r--", Owner: "42:43", Content: "read me"},
				"/opt/pkg/link":     {Mode: "Lrw-r--r--", Owner: "42:43", Link: "README"},
				"/n.gz":             {Mode: "-rw-r--r--", Owner: "0:0", Content: plain.String()},
			},
			exact: true,
		},
		{
			name:       "copy does not unpack",
			dockerfile: "FROM scratch\nCOPY pkg.tar.gz /p.tgz\n",
			want:       map[string]pulledFile{"/p.tgz": f(pkg)},
			exact:      true,
		},
		{
			name:       "variables in paths",
			dockerfile: "FROM scratch\nENV DIR=/srv\nCOPY a.txt ${DIR}/\nCOPY b.txt ${MISSING:-/fallback}/\n",
			want:       map[string]pulledFile{"/srv": d("0:0"), "/srv/a.txt": f("a"), "/fallback": d("0:0"), "/fallback/b.txt": f("b")},
			exact:      true,
		},
		{
			name:       "from a stage: whiteouts, owners and linked parents",
			dockerfile: "FROM REGISTRY/base/multi:v1 AS base\nFROM scratch\nCOPY --from=base /opt/ /opt/\nCOPY --from=base /lib/libx.so /lib/\nCOPY --from=0 /srv/www /www\n",
			want: map[string]pulledFile{
				"/opt": d("0:0"), "/opt/keep.txt": {Mode: "-rw-r--r--", Owner: "7:8", Content: "keep"}, "/opt/new.txt": f("new"),
				"/lib": d("0:0"), "/lib/libx.so": {Mode: "-rwxr-xr-x", Owner: "0:0", Content: "lib-amd64"},
				"/www": d("0:0"), "/www/index.md": f("# hi"),
			},
			exact: true,
		},
		{
			name:       "from an image",
			dockerfile: "FROM scratch\nCOPY --from=REGISTRY/base/multi:v1 /etc/arch /arch\n",
			want:       map[string]pulledFile{"/arch": f("amd64\n")},
			exact:      true,
		},
		{
			name:       "from a stage by glob",
			dockerfile: "FROM REGISTRY/base/multi:v1 AS base\nFROM scratch\nCOPY --from=base /etc/pa* /etc/g* /e/\n",
			want:       map[string]pulledFile{"/e": d("0:0"), "/e/passwd": f(passwd), "/e/group": f(group)},
			exact:      true,
		},
		{
			name:       "chown by names in a registry base",
			dockerfile: "FROM REGISTRY/base/multi:v1\nCOPY --chown=web a.txt /srv/a\nCOPY --chown=app:staff src/ /home/app/\nCOPY --chown=1234 b.txt /b\nCOPY --chown=5:root c.md /c\n",
			want: map[string]pulledFile{
				"/srv/a":            {Mode: "-rw-r--r--", Owner: "1001:50", Content: "a"},
				"/home/app":         d("1000:50"),
				"/home/app/x":       {Mode: "-rw-r--r--", Owner: "1000:50", Content: "x"},
				"/home/app/sub/y":   {Mode: "-rw-------", Owner: "1000:50", Content: "y"},
				"/b":                {Mode: "-rw-r--r--", Owner: "1234:1234", Content: "b"},
				"/c":                {Mode: "-rw-r--r--", Owner: "5:0", Content: "c"},
				"/opt/keep.txt":     {Mode: "-rw-r--r--", Owner: "7:8", Content: "keep"},
				"/usr/lib/libx.so":  {Mode: "-rwxr-xr-x", Owner: "0:0", Content: "lib-amd64"},
				"/srv/www/index.md": f("# hi"),
			},
			absent: []string{"/opt/old.txt"},
		},
		{
			name:       "parents of a deep copy on scratch",
			dockerfile: "FROM scratch\nCOPY nested /n\n",
			want:       map[string]pulledFile{"/n": d("0:0"), "/n/a": d("0:0"), "/n/a/b": d("0:0"), "/n/a/b/c.txt": f("deep")},
			exact:      true,
		},
		{name: "unknown user", dockerfile: "FROM REGISTRY/base/multi:v1\n\nCOPY --chown=nobody a.txt /a\n", wantErr: `Dockerfile:3: COPY: --chown=nobody: no user "nobody" in /etc/passwd`},
		{name: "names need /etc/passwd", dockerfile: "FROM scratch\nCOPY --chown=app a.txt /a\n", wantErr: `Dockerfile:2: COPY: --chown=app: user "app" cannot be looked up: the stage has no /etc/passwd`},
		{name: "unknown group", dockerfile: "FROM REGISTRY/base/multi:v1\nCOPY --chown=app:wheel a.txt /a\n", wantErr: `no group "wheel" in /etc/group`},
		{name: "symbolic chmod", dockerfile: "FROM scratch\nCOPY --chmod=u+x a.txt /a\n", wantErr: "Dockerfile:2: COPY: --chmod=u+x: only octal modes"},
		{name: "missing source", dockerfile: "FROM scratch\nCOPY nope.txt /\n", wantErr: "Dockerfile:2: COPY: source nope.txt: not in the build context"},
		{name: "ignored source", dockerfile: "FROM scratch\nCOPY debug.log /\n", wantErr: "source debug.log: not in the build context (missing, or excluded by .dockerignore)"},
		{name: "glob matches nothing", dockerfile: "FROM scratch\nCOPY *.go /\n", wantErr: "Dockerfile:2: COPY: source *.go matches no file in the build context"},
		{name: "missing in stage", dockerfile: "FROM scratch AS a\nCOPY a.txt /a\nFROM scratch\nCOPY --from=a /b /b\n", wantErr: "Dockerfile:4: COPY: source /b: no such file or directory"},
		{name: "later stage", dockerfile: "FROM scratch AS first\nCOPY --from=later /a /a\nFROM scratch AS later\n", target: "first", wantErr: "Dockerfile:2: COPY --from=later: the stage is defined later"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			files := map[string]tfile{"Dockerfile": {body: strings.ReplaceAll(tt.dockerfile, "REGISTRY", e.host)}}
			for k, v := range context {
				files[k] = v
			}
			writeTree(t, root, files)
			res, err := e.build(t, Request{Root: root, BuildArgs: tt.args, Target: tt.target, Platforms: []string{"linux/amd64"}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := pull(t, res.Ref, time.Unix(0, 0))[0].Files
			if !tt.exact {
				for k := range got {
					if _, ok := tt.want[k]; !ok {
						delete(got, k)
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			full := pull(t, res.Ref, time.Unix(0, 0))[0].Files
			for _, a := range tt.absent {
				if _, ok := full[a]; ok {
					t.Errorf("%s is present", a)
				}
			}
		})
	}
}

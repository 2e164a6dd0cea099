package build

import (
	"bytes"
	"context"
	"path"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/patternmatcher"

	"github.com/fleetwright/fleetwright/internal/registry"
)

// FuzzDockerfile feeds arbitrary Dockerfiles through the front end and,
// when they need no registry, through execution against an empty context.
func FuzzDockerfile(f *testing.F) {
	f.Add([]byte(goDockerfile), "build")
	f.Add([]byte("FROM scratch\nARG A=${B:-x}\nENV C=$A D=\"e f\"\nLABEL x=$C\nWORKDIR $C/..\nEXPOSE 80 ${P:-81}/udp\nCMD echo $C\n"), "")
	f.Add([]byte("# escape=`\nFROM scratch AS a\nCOPY <<EOF /x\n${A}\nEOF\nFROM a\nCOPY --from=a --chmod=644 /x /y\nHEALTHCHECK CMD true\nONBUILD COPY . /\n"), "a")
	f.Add([]byte("ARG X\nFROM ${X:-scratch}\nSHELL [\"/bin/ash\",\"-c\"]\nENTRYPOINT run\nUSER 1:2\nVOLUME /v\nSTOPSIGNAL 9\n"), "")
	f.Add([]byte("FROM scratch\nRUN --mount=type=cache,target=/x make\nADD http://x/y /\n"), "")
	root := f.TempDir()
	reg := registry.New(registry.Options{})
	local, err := NewLocal(LocalOptions{Registry: reg, NoRun: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte, target string) {
		df, err := parseDockerfile("Dockerfile", src)
		if err != nil {
			return
		}
		amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
		p, err := df.plan(amd64, amd64, map[string]string{"A": "1"}, target)
		if err != nil || len(p.images) > 0 {
			return
		}
		bc := &buildContext{root: root, dir: root, display: "Dockerfile", index: map[string]int{}}
		x := &executor{l: local, req: Request{Name: "fuzz"}, bc: bc, layers: map[string]*memLayer{}, bases: map[string]*baseImage{}, images: map[string]*stageFS{}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if img, err := x.runPlan(ctx, df, p); err == nil {
			if _, err := img.Digest(); err != nil {
				t.Errorf("built image has no digest: %v", err)
			}
		}
	})
}

// FuzzIgnore checks the walk's incremental matching against the
// pattern matcher's own answer for every path, parents first.
func FuzzIgnore(f *testing.F) {
	f.Add("*.md\n!README.md\n", "README.md\ndocs/a.md\ndocs/b/c.md")
	f.Add("docs\n!docs/keep.md\n", "docs\ndocs/keep.md\ndocs/x")
	f.Add("**/*.go\n# c\n/tmp\n", "a/b/c.go\ntmp/x\nx.go")
	f.Add("pkg\n!pkg/**/*_test.go\n", "pkg\npkg/a\npkg/a/b_test.go")
	f.Fuzz(func(t *testing.T, patterns, paths string) {
		var pats []string
		for _, l := range strings.Split(patterns, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				pats = append(pats, l)
			}
		}
		ig, err := newIgnorer(pats)
		if err != nil {
			return
		}
		ref, err := patternmatcher.New(pats)
		if err != nil && len(pats) > 0 {
			t.Fatalf("newIgnorer accepted patterns the matcher refuses: %v", err)
		}
		// Ask parents before children, as the walk does.
		seen := map[string]bool{}
		var list []string
		for _, p := range strings.Split(paths, "\n") {
			p = path.Clean(strings.Trim(p, "/"))
			if p == "." || strings.HasPrefix(p, "..") || strings.ContainsAny(p, "\x00\\") {
				continue
			}
			parts := strings.Split(p, "/")
			for i := range parts {
				q := strings.Join(parts[:i+1], "/")
				if !seen[q] {
					seen[q] = true
					list = append(list, q)
				}
			}
		}
		for _, p := range list {
			got, err := ig.excluded(p, true)
			if err != nil || ref == nil {
				continue
			}
			want, err := ref.MatchesOrParentMatches(p)
			if err != nil {
				continue
			}
			if got != want {
				t.Errorf("patterns %q, path %q: excluded=%v, matcher says %v", pats, p, got, want)
			}
		}
	})
}

func FuzzChown(f *testing.F) {
	f.Add("app:staff", passwd, group)
	f.Add("1000", "", "")
	f.Add("web", passwd, group)
	f.Add("0:root", "", group)
	f.Fuzz(func(t *testing.T, spec, pw, gr string) {
		o, err := resolveChown(spec, func(p string) ([]byte, bool, error) {
			if p == "/etc/passwd" {
				return []byte(pw), pw != "", nil
			}
			return []byte(gr), gr != "", nil
		})
		if err != nil {
			return
		}
		if o.uid < 0 || o.gid < 0 {
			t.Errorf("resolveChown(%q) = %+v", spec, o)
		}
		if u, ok := parseID(strings.SplitN(spec, ":", 2)[0]); ok && u != o.uid {
			t.Errorf("numeric user %q gave uid %d", spec, o.uid)
		}
	})
}

func FuzzDigestFile(f *testing.F) {
	f.Add([]byte("sha256:" + strings.Repeat("a", 64)))
	f.Add([]byte(`{"containerimage.digest":"sha256:` + strings.Repeat("b", 64) + `"}`))
	f.Add([]byte("x@sha256:" + strings.Repeat("c", 64) + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := parseDigestFile(data)
		if err != nil {
			return
		}
		if h.Algorithm != "sha256" || len(h.Hex) != 64 {
			t.Errorf("parseDigestFile(%q) = %v", data, h)
		}
	})
}

func FuzzUnpackArchive(f *testing.F) {
	f.Add([]byte(tarGz(f, map[string]string{"pkg/": "", "pkg/README": "r", "pkg/link": "->../../etc"})))
	var plain bytes.Buffer
	f.Add(plain.Bytes())
	f.Add([]byte("BZh91AY&SY"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := unpackArchive(data)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.path == "" || path.IsAbs(e.path) || path.Clean(e.path) != e.path || strings.HasPrefix(e.path, "..") {
				t.Errorf("entry path %q escapes or is not clean", e.path)
			}
		}
	})
}

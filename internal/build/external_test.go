package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// helperCommand runs this test binary as the fake program named by mode.
func helperCommand(mode string) ([]string, []string) {
	return []string{os.Args[0]}, append(os.Environ(), helperEnv+"="+mode)
}

// layerText returns the single layer of an image the fake programs push.
func layerText(t *testing.T, ref string) string {
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
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %v, %v", len(layers), err)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return string(b)
}

func TestExternalBuilder(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	root := t.TempDir()
	writeTree(t, root, map[string]tfile{
		"app/Dockerfile": {body: "FROM scratch\nCOPY . /src\nRUN make\n"},
		"app/main.c":     {body: "int main;"},
	})
	tests := []struct {
		format  string
		wantErr string
	}{
		{format: "bare"},
		{format: "name"},
		{format: "json"},
		{format: "none", wantErr: "wrote no digest file"},
		{format: "wrong", wantErr: "reported digest sha256:0000"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			t.Parallel()
			argv, env := helperCommand("external")
			argv = append(argv, "--image={image}", "--digest-file", "{digest-file}", "--format="+tt.format, "{target-args}", "{build-args}")
			ext, err := NewExternal(ExternalOptions{Command: argv, Env: env, Registry: e.reg})
			if err != nil {
				t.Fatal(err)
			}
			local, _ := NewLocal(LocalOptions{Registry: e.reg, NoRun: true})
			b := Fallback{Primary: local, Secondary: ext}
			req := Request{
				Root: root, Context: "app", Repo: e.host + "/shop/native", Tag: "ext-" + tt.format,
				BuildArgs: map[string]string{"VERSION": "1.0", "MODE": "fast"}, Target: "", SourceDateEpoch: 42,
			}
			res, err := b.Build(context.Background(), req)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			h, err := e.reg.Digest(context.Background(), req.Repo+":"+req.Tag)
			if err != nil {
				t.Fatal(err)
			}
			want := Result{Ref: req.Repo + ":" + req.Tag + "@" + h.String(), Repo: req.Repo, Tag: req.Tag, Digest: h.String(), Platforms: DefaultPlatforms()}
			if diff := cmp.Diff(want, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			got := layerText(t, res.Ref)
			wantText := "image=" + req.Repo + ":" + req.Tag + "\ntarget=\ncwd-is-context=true\nplatforms=linux/amd64,linux/arm64\nepoch=42\n" +
				"MODE=fast\nVERSION=1.0\nenv:FLEETWRIGHT_BUILD_ARG_MODE=fast\nenv:FLEETWRIGHT_BUILD_ARG_VERSION=1.0\n"
			if diff := cmp.Diff(wantText, got); diff != "" {
				t.Errorf("what the command was told (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExternalBuilderFailureShowsOutput(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	root := t.TempDir()
	writeTree(t, root, map[string]tfile{"Dockerfile": {body: "FROM scratch\nRUN make\n"}})
	argv, env := helperCommand("external")
	ext, err := NewExternal(ExternalOptions{Command: append(argv, "--image={image}", "--fail"), Env: env, Registry: e.reg})
	if err != nil {
		t.Fatal(err)
	}
	local, _ := NewLocal(LocalOptions{Registry: e.reg, NoRun: true})
	b := &ContentAddressed{Inner: Fallback{Primary: local, Secondary: ext}, Registry: e.reg}
	var progress bytes.Buffer
	_, err = RunLevels(context.Background(), b, [][]Job{{{Name: "shop/native", Request: Request{Root: root, Repo: e.host + "/shop/native"}}}},
		RunOptions{Progress: &progress})
	var ce *CommandError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *CommandError", err)
	}
	if !strings.HasPrefix(err.Error(), "shop/native: build shop/native: ") || !strings.Contains(err.Error(), "failed: exit status 1") {
		t.Errorf("err = %q", err)
	}
	out := progress.String()
	for _, want := range []string{
		"build 1/1 shop/native: building\n",
		"build 1/1 shop/native: failed: ",
		"    | step 2/3: RUN make\n",
		"    | make: *** [all] Error 1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
}

func TestPack(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	root := t.TempDir()
	writeTree(t, root, map[string]tfile{"web/package.json": {body: "{}"}, "web/index.js": {body: "x"}})
	req := Request{Root: root, Context: "web", Repo: e.host + "/shop/web", Tag: "bp1", Mode: ModeBuildpack,
		BuildArgs: map[string]string{"BP_NODE_VERSION": "20"}, Platforms: []string{"linux/arm64"}}

	for _, lookPath := range []func(string) (string, error){nil, func(string) (string, error) { return "", errors.New("not found") }} {
		p, err := NewPack(PackOptions{Registry: e.reg, LookPath: lookPath})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Build(context.Background(), req); !errors.Is(err, ErrBuildpackUnsupported) {
			t.Errorf("without pack: err = %v, want ErrBuildpackUnsupported", err)
		}
	}

	argv, env := helperCommand("pack")
	p, err := NewPack(PackOptions{
		Registry: e.reg, Env: env, Builder: "example/builder:1",
		LookPath: func(file string) (string, error) {
			if file != "pack" {
				return "", fmt.Errorf("looked up %q", file)
			}
			return argv[0], nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Build(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := e.reg.Digest(context.Background(), req.Repo+":bp1")
	if res.Digest != h.String() || res.Ref != req.Repo+":bp1@"+h.String() {
		t.Errorf("result %+v, registry has %s", res, h)
	}
	want := "builder=example/builder:1\nplatform=linux/arm64\nenv=BP_NODE_VERSION=20\nfiles=index.js,package.json\n"
	if got := layerText(t, res.Ref); got != want {
		t.Errorf("pack was run as %q, want %q", got, want)
	}
}

func TestByMode(t *testing.T) {
	t.Parallel()
	called := ""
	fake := func(name string) Builder {
		return BuilderFunc(func(context.Context, Request) (Result, error) { called = name; return Result{}, nil })
	}
	b := ByMode{Dockerfile: fake("dockerfile"), Buildpack: fake("buildpack")}
	for _, m := range []Mode{ModeDockerfile, ModeBuildpack} {
		if _, err := b.Build(context.Background(), Request{Mode: m}); err != nil || called != m.String() {
			t.Errorf("mode %s went to %q (%v)", m, called, err)
		}
	}
	if _, err := (ByMode{}).Build(context.Background(), Request{Name: "x", Mode: ModeBuildpack}); err == nil || err.Error() != "build x: no builder for buildpack mode" {
		t.Errorf("err = %v", err)
	}
}

func TestParseDigestFile(t *testing.T) {
	t.Parallel()
	d := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		in      string
		wantErr bool
	}{
		{d, false},
		{d + "\n", false},
		{"registry.example.com/a/b@" + d, false},
		{`{"containerimage.digest": "` + d + `", "image.name": "x"}`, false},
		{`{"image.name": "x"}`, true},
		{`{"containerimage.digest": 5}`, true},
		{"sha256:abc", true},
		{"md5:" + strings.Repeat("a", 32), true},
		{"", true},
	}
	for _, tt := range tests {
		h, err := parseDigestFile([]byte(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("parseDigestFile(%q) = %v, %v", tt.in, h, err)
			continue
		}
		if err == nil && h.String() != d {
			t.Errorf("parseDigestFile(%q) = %s", tt.in, h)
		}
	}
}

func TestRunLevels(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var order []string
	running, maxRunning := 0, 0
	finished := map[string]bool{}
	b := BuilderFunc(func(ctx context.Context, req Request) (Result, error) {
		mu.Lock()
		// every job of level 1 must be done before level 2 starts
		if strings.HasPrefix(req.Name, "l2") && !(finished["l1-a"] && finished["l1-b"] && finished["l1-c"]) {
			mu.Unlock()
			return Result{}, errors.New("started before its dependencies")
		}
		running++
		maxRunning = max(maxRunning, running)
		order = append(order, req.Name)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		running--
		finished[req.Name] = true
		mu.Unlock()
		return Result{Ref: "r/" + req.Name + ":t@sha256:x", Reused: req.Name == "l1-b"}, nil
	})
	levels := [][]Job{
		{{Name: "l1-a"}, {Name: "l1-b"}, {Name: "l1-c"}},
		{{Name: "l2-a"}},
	}
	var progress bytes.Buffer
	res, err := RunLevels(context.Background(), b, levels, RunOptions{Concurrency: 2, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 || res["l2-a"].Ref != "r/l2-a:t@sha256:x" {
		t.Errorf("results %v", res)
	}
	if maxRunning > 2 {
		t.Errorf("%d builds at once, want at most 2", maxRunning)
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	slices := map[string]bool{}
	for _, l := range lines {
		slices[l] = true
	}
	for _, want := range []string{
		"build 1/4 l1-a: building", "build 1/4 l1-a: pushed r/l1-a:t@sha256:x",
		"build 2/4 l1-b: up to date r/l1-b:t@sha256:x", "build 4/4 l2-a: pushed r/l2-a:t@sha256:x",
	} {
		if !slices[want] {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	if len(lines) != 8 {
		t.Errorf("%d progress lines, want 8:\n%s", len(lines), progress.String())
	}
}

func TestRunLevelsFailsFast(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	started := map[string]bool{}
	b := BuilderFunc(func(ctx context.Context, req Request) (Result, error) {
		mu.Lock()
		started[req.Name] = true
		mu.Unlock()
		if req.Name == "bad" {
			return Result{}, errors.New("boom")
		}
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-time.After(10 * time.Second):
			return Result{}, errors.New("not cancelled")
		}
	})
	levels := [][]Job{{{Name: "slow"}, {Name: "bad"}, {Name: "never1"}, {Name: "never2"}}, {{Name: "next-level"}}}
	_, err := RunLevels(context.Background(), b, levels, RunOptions{Concurrency: 2})
	if err == nil || err.Error() != "bad: boom" {
		t.Fatalf("err = %v, want bad: boom", err)
	}
	if started["next-level"] {
		t.Error("a later level ran after a failure")
	}
	if _, err := RunLevels(context.Background(), b, [][]Job{{{Name: "a"}}, {{Name: "a"}}}, RunOptions{}); err == nil {
		t.Error("repeated job names accepted")
	}
}

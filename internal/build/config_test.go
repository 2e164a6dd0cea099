package build

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func TestConfigInstructions(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.seedBases(t)
	scratchEnv := []string{"PATH=" + defaultPath}
	tests := []struct {
		name       string
		dockerfile string
		args       map[string]string
		target     string
		want       v1.Config
	}{
		{
			name:       "shell forms use /bin/sh -c",
			dockerfile: "FROM scratch\nENTRYPOINT exec /app --flag\nCMD echo \"hi there\"\n",
			want:       v1.Config{Env: scratchEnv, Entrypoint: []string{"/bin/sh", "-c", "exec /app --flag"}, Cmd: []string{"/bin/sh", "-c", `echo "hi there"`}},
		},
		{
			name:       "SHELL changes the shell form",
			dockerfile: "FROM scratch\nSHELL [\"/bin/bash\", \"-eu\", \"-c\"]\nCMD run.sh\n",
			want:       v1.Config{Env: scratchEnv, Shell: []string{"/bin/bash", "-eu", "-c"}, Cmd: []string{"/bin/bash", "-eu", "-c", "run.sh"}},
		},
		{
			name:       "inherits the base; ENTRYPOINT drops the inherited CMD",
			dockerfile: "FROM REGISTRY/base/multi:v1\nENV A=1\nENTRYPOINT [\"/x\"]\n",
			want:       v1.Config{Env: []string{"PATH=/usr/bin:/bin", "BASE_ENV=base", "A=1"}, Entrypoint: []string{"/x"}, WorkingDir: "/", Labels: map[string]string{"base": "multi"}},
		},
		{
			name:       "CMD before ENTRYPOINT in the same stage stays",
			dockerfile: "FROM REGISTRY/base/multi:v1\nCMD [\"a\"]\nENTRYPOINT [\"/x\"]\nENV PATH=/opt/bin:$PATH\n",
			want:       v1.Config{Env: []string{"PATH=/opt/bin:/usr/bin:/bin", "BASE_ENV=base"}, Entrypoint: []string{"/x"}, Cmd: []string{"a"}, WorkingDir: "/", Labels: map[string]string{"base": "multi"}},
		},
		{
			name:       "ENV wins over ARG",
			dockerfile: "FROM scratch\nARG X=arg\nENV X=env\nARG X=arg2\nLABEL x=$X\n",
			want:       v1.Config{Env: append(scratchEnv, "X=env"), Labels: map[string]string{"x": "env"}},
		},
		{
			name:       "global ARG must be declared again in the stage",
			dockerfile: "ARG V=global\nARG W=w\nFROM scratch\nARG V\nLABEL v=$V w=${W:-unset}\n",
			want:       v1.Config{Env: scratchEnv, Labels: map[string]string{"v": "global", "w": "unset"}},
		},
		{
			name:       "build arguments override defaults",
			dockerfile: "ARG V=global\nFROM scratch\nARG V\nARG S=stage\nARG UNSET\nLABEL v=$V s=$S u=${UNSET:-none} n=\"${NOTDECLARED}\"\n",
			args:       map[string]string{"V": "cli-v", "S": "cli-s", "NOTDECLARED": "x"},
			want:       v1.Config{Env: scratchEnv, Labels: map[string]string{"v": "cli-v", "s": "cli-s", "u": "none", "n": ""}},
		},
		{
			name:       "automatic platform arguments",
			dockerfile: "FROM scratch\nARG TARGETPLATFORM\nARG TARGETOS TARGETARCH\nARG BUILDPLATFORM\nLABEL p=$TARGETPLATFORM os=$TARGETOS arch=$TARGETARCH build=$BUILDPLATFORM\n",
			want:       v1.Config{Env: scratchEnv, Labels: map[string]string{"p": "linux/amd64", "os": "linux", "arch": "amd64", "build": "linux/amd64"}},
		},
		{
			name:       "ports, volumes, user, workdir, stop signal, onbuild",
			dockerfile: "FROM scratch\nENV U=app\nEXPOSE 8000-8002/tcp 53/UDP\nVOLUME [\"/data\", \"/cache\"]\nUSER ${U}:staff\nWORKDIR /a\nWORKDIR b\nWORKDIR ../c\nSTOPSIGNAL SIGQUIT\nONBUILD COPY . /src\nMAINTAINER someone\n",
			want: v1.Config{
				Env:          append(scratchEnv, "U=app"),
				ExposedPorts: map[string]struct{}{"8000/tcp": {}, "8001/tcp": {}, "8002/tcp": {}, "53/udp": {}},
				Volumes:      map[string]struct{}{"/data": {}, "/cache": {}},
				User:         "app:staff",
				WorkingDir:   "/a/c",
				StopSignal:   "SIGQUIT",
				OnBuild:      []string{"COPY . /src"},
			},
		},
		{
			name:       "healthcheck forms",
			dockerfile: "FROM scratch\nHEALTHCHECK --timeout=3s --start-period=10s CMD curl -f http://localhost/ || exit 1\n",
			want:       v1.Config{Env: scratchEnv, Healthcheck: &v1.HealthConfig{Test: []string{"CMD-SHELL", "curl -f http://localhost/ || exit 1"}, Timeout: 3 * time.Second, StartPeriod: 10 * time.Second}},
		},
		{
			name:       "healthcheck none",
			dockerfile: "FROM scratch\nHEALTHCHECK NONE\n",
			want:       v1.Config{Env: scratchEnv, Healthcheck: &v1.HealthConfig{Test: []string{"NONE"}}},
		},
		{
			name:       "target stage",
			dockerfile: "FROM scratch AS one\nLABEL stage=one\nFROM one AS two\nLABEL stage=two extra=yes\nFROM scratch\nLABEL stage=last\n",
			target:     "TWO",
			want:       v1.Config{Env: scratchEnv, Labels: map[string]string{"stage": "two", "extra": "yes"}},
		},
		{
			name:       "escape directive",
			dockerfile: "# escape=`\nFROM scratch\nLABEL a=x `\n      b=y\n",
			want:       v1.Config{Env: scratchEnv, Labels: map[string]string{"a": "x", "b": "y"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeTree(t, root, map[string]tfile{"Dockerfile": {body: strings.ReplaceAll(tt.dockerfile, "REGISTRY", e.host)}})
			res, err := e.build(t, Request{Root: root, BuildArgs: tt.args, Target: tt.target, Platforms: []string{"linux/amd64"}})
			if err != nil {
				t.Fatal(err)
			}
			got := pull(t, res.Ref, time.Unix(0, 0))[0].Config
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDockerfileErrors(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tests := []struct {
		name       string
		dockerfile string
		target     string
		want       string
	}{
		{"unknown instruction", "FROM scratch\n\nCOPPY a /a\n", "", "Dockerfile:3: unknown instruction: COPPY"},
		{"no FROM", "# nothing\nLABEL a=b\n", "", "Dockerfile:2: no build stage in current context"},
		{"empty", "# only a comment\n", "", "file with no instructions"},
		{"FROM arguments", "FROM a b\n", "", "Dockerfile:1: FROM requires either one or three arguments"},
		{"bad port", "FROM scratch\nEXPOSE 99999\n", "", `Dockerfile:2: EXPOSE: "99999": invalid port "99999"`},
		{"bad protocol", "FROM scratch\nEXPOSE 80/icmp\n", "", `Dockerfile:2: EXPOSE: "80/icmp": protocol must be tcp, udp or sctp`},
		{"missing target", "FROM scratch AS a\n", "b", `Dockerfile: target stage "b" not found`},
		{"empty base", "ARG BASE\nFROM ${BASE}\n", "", "Dockerfile:2: FROM ${BASE}: empty image name"},
		{"bad platform", "FROM --platform=linux scratch\n", "", "Dockerfile:1: FROM --platform: platform \"linux\": want os/arch[/variant]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeTree(t, root, map[string]tfile{"Dockerfile": {body: tt.dockerfile}})
			_, err := e.build(t, Request{Root: root, Target: tt.target})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("Dockerfile errors made %d registry requests", n)
	}
}

func TestDockerfileInSubdirectory(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	root := t.TempDir()
	writeTree(t, root, map[string]tfile{
		"services/api/build/Dockerfile":              {body: "FROM scratch\nCOPY . /app\nRUN x\n"},
		"services/api/build/Dockerfile.dockerignore": {body: "secret\n"},
		"services/api/.dockerignore":                 {body: "*\n"},
		"services/api/main.go":                       {body: "m"},
		"services/api/secret":                        {body: "s"},
	})
	req := Request{Root: root, Context: "services/api", Dockerfile: "build/Dockerfile"}
	local, err := NewLocal(LocalOptions{Registry: e.reg, NoRun: true})
	if err != nil {
		t.Fatal(err)
	}
	e.local = local
	_, err = e.build(t, req)
	if err == nil || !strings.HasPrefix(err.Error(), "services/api/build/Dockerfile:3: RUN is left to the external builder") {
		t.Errorf("err = %v, want it to point at services/api/build/Dockerfile:3", err)
	}
	// The Dockerfile's own ignore file wins over the context's.
	bc, err := openContext(req)
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close()
	var names []string
	for _, f := range bc.files {
		names = append(names, f.rel)
	}
	want := []string{".dockerignore", "build", "build/Dockerfile", "build/Dockerfile.dockerignore", "main.go"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
}

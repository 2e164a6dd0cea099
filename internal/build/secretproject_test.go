package build

import (
	"strings"
	"testing"
	"time"
)

// TestRunSecretProjects: a secret platform.yaml gives to some projects is
// refused, naming it, to a build of any other project, before anything
// runs; the projects it lists mount it.
func TestRunSecretProjects(t *testing.T) {
	t.Parallel()
	const token = "deploy-key-5e1d"
	re := newRunEnv(t, LocalOptions{
		Secrets:        map[string]SecretSource{"npm": {Env: "NPM"}, "none": {Env: "NPM"}, "cli": {Env: "NPM"}},
		SecretProjects: map[string][]string{"npm": {"shop"}, "none": {}},
		LookupEnv:      func(k string) (string, bool) { return token, k == "NPM" },
	})
	df := "FROM BASE\nRUN --mount=type=secret,id=npm wc -c < /run/secrets/npm > /len\n"
	root := re.context(t, df, nil)
	_, err := re.buildRun(t, root, func(r *Request) { r.Project = "blog" })
	if err == nil || !strings.Contains(err.Error(), `Dockerfile:2: RUN: secret "npm" may not be mounted by project blog: platform.yaml build.secrets[].projects says only shop may`) {
		t.Errorf("project blog: %v", err)
	}
	if strings.Contains(re.output.String(), "wc -c") {
		t.Errorf("the refused RUN ran:\n%s", re.output)
	}
	res, err := re.buildRun(t, root, func(r *Request) { r.Project = "shop" })
	if err != nil {
		t.Fatalf("project shop: %v\n%s", err, re.output)
	}
	if got := pull(t, res.Ref, time.Unix(1700000000, 0))[0].Files["/len"].Content; strings.TrimSpace(got) != "15" {
		t.Errorf("/len = %q", got)
	}
	// Listed with no projects: no build may mount it, even without
	// required. Not listed (a command-line secret): every build may.
	root = re.context(t, "FROM BASE\nRUN --mount=type=secret,id=none true\n", nil)
	if _, err := re.buildRun(t, root, func(r *Request) { r.Project = "shop" }); err == nil || !strings.Contains(err.Error(), `secret "none" may not be mounted by project shop: platform.yaml build.secrets[].projects says no project may mount it`) {
		t.Errorf("no projects: %v", err)
	}
	root = re.context(t, "FROM BASE\nRUN --mount=type=secret,id=cli,required true\n", nil)
	if _, err := re.buildRun(t, root, func(r *Request) { r.Project = "blog" }); err != nil {
		t.Errorf("command-line secret: %v", err)
	}
}

func TestSecretUses(t *testing.T) {
	t.Parallel()
	df := "FROM scratch AS a\nRUN --mount=type=secret,id=npm true\nFROM a\nRUN --mount=type=cache,target=/c --mount=type=secret,target=/run/secrets/token,required true\nRUN true\n"
	got, err := SecretUses("Dockerfile", []byte(df))
	if err != nil {
		t.Fatal(err)
	}
	want := []SecretUse{{"npm", 2}, {"token", 4}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("SecretUses = %v, want %v", got, want)
	}
	if _, err := SecretUses("Dockerfile", []byte("RUN true\n")); err == nil {
		t.Error("a Dockerfile without FROM: no error")
	}
}

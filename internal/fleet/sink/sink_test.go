package sink_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/sink"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/manifest"
)

const (
	gen   = manifest.Header
	token = "ghs_sinktoken"
)

var bot = gitrepo.Signature{Name: "fleetwright", Email: "bot@fleetwright.example"}

func fleetOf(files map[string]string) *generate.Fleet {
	f := &generate.Fleet{}
	for p, b := range files {
		f.Files = append(f.Files, generate.File{Path: p, Data: []byte(b)})
	}
	return f
}

// desired is the fleet of the tests: an app's Deployment, changed from v1.
var desired = fleetOf(map[string]string{"apps/c/p/a/web/deployment-a-web.yaml": gen + "v2\n"})

func TestDir(t *testing.T) {
	t.Parallel()
	for _, indexed := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "indexed"}[indexed], func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			for p, b := range map[string]string{
				"apps/c/p/a/web/deployment-a-web.yaml": gen + "v1\n",
				"apps/c/p/a/web/old.yaml":              gen + "old\n",
				"apps/c/p/a/web/notes.txt":             "by hand\n",
			} {
				golden.WriteFile(t, filepath.Join(root, p), b)
			}
			mk := func(dry bool) sink.Sink {
				d := &sink.Dir{Root: root, Managed: []string{"apps/c"}, DryRun: dry}
				if indexed {
					return sink.NewIndexed(d, filepath.Join(t.TempDir(), "index"))
				}
				return d
			}
			want := []fleet.Change{
				{Path: "apps/c/p/a/web/deployment-a-web.yaml", Op: fleet.Update, Old: []byte(gen + "v1\n"), New: []byte(gen + "v2\n")},
				{Path: "apps/c/p/a/web/old.yaml", Op: fleet.Delete, Old: []byte(gen + "old\n")},
			}
			res, err := mk(true).Land(context.Background(), desired)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, res.Changes); diff != "" {
				t.Errorf("dry run changes (-want +got):\n%s", diff)
			}
			if res.Written != 1 || res.Deleted != 1 || !cmp.Equal(res.Unmanaged, []string{"apps/c/p/a/web/notes.txt"}) {
				t.Errorf("dry run: %+v", res)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "apps/c/p/a/web/old.yaml")); string(b) != gen+"old\n" {
				t.Error("the dry run changed the folder")
			}
			if res, err = mk(false).Land(context.Background(), desired); err != nil || res.CacheErr != nil {
				t.Fatal(err, res.CacheErr)
			}
			if diff := cmp.Diff(want, res.Changes); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if res, err = mk(true).Land(context.Background(), desired); err != nil || !res.Empty() || res.Unchanged != 1 {
				t.Errorf("after landing: %+v, %v", res, err)
			}
		})
	}
}

// TestPushAndPullRequest: a dry run compares with the fleet branch, with
// the paths of the fleet folder, and changes nothing; landing pushes, and
// the pull request sink opens the pull request of the head branch.
func TestPushAndPullRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gs := gittest.NewServer(t)
	url := gs.CreateRepo(t, "fleet.git", "main", map[string]string{
		"README.md": "fleet\n",
		"deploy/apps/c/p/a/web/deployment-a-web.yaml": gen + "v1\n",
		"deploy/apps/c/p/a/web/notes.txt":             "by hand\n",
	})
	bare := gs.Path("fleet.git")
	head := gittest.Git(t, bare, "rev-parse", "main")
	api := githubtest.New(t, githubtest.WithToken(token))
	client, err := github.New(github.Config{BaseURL: api.URL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(dry bool) *sink.PullRequest {
		return &sink.PullRequest{
			Push: &sink.Push{Remote: gitrepo.Remote{URL: url}, Branch: "main", Head: "fleet/render", Path: "./deploy/",
				Managed: []string{"apps/c"}, Workdir: t.TempDir(), Author: bot, SpecCommit: "abc123", DryRun: dry},
			GitHub: client, Repo: github.Repo{Owner: "acme", Name: "fleet"},
		}
	}

	dry := mk(true)
	var progress bytes.Buffer
	dry.Push.Progress = &progress
	res, err := dry.Land(ctx, desired)
	if err != nil {
		t.Fatal(err)
	}
	if p := progress.String(); !strings.HasPrefix(p, "cloning the fleet repository (main)\n") || !strings.Contains(p, "objects") {
		t.Errorf("progress of the clone = %q", p)
	}
	want := []fleet.Change{{Path: "apps/c/p/a/web/deployment-a-web.yaml", Op: fleet.Update, Old: []byte(gen + "v1\n"), New: []byte(gen + "v2\n")}}
	if diff := cmp.Diff(want, res.Changes); diff != "" {
		t.Errorf("dry run changes (-want +got):\n%s", diff)
	}
	if res.Commit != strings.TrimSpace(head) || res.Unchanged != 0 || res.PullRequest != nil {
		t.Errorf("dry run: %+v", res)
	}
	if refs := gittest.Git(t, bare, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/main\n" {
		t.Errorf("the dry run pushed: %s", refs)
	}

	api.Expect("GET", "/repos/acme/fleet/pulls").Query("head", "acme:fleet/render")
	api.Expect("POST", "/repos/acme/fleet/pulls").JSONField("title", "fleetwright: update c/p/a").
		JSONField("body", "Apps changed:\n- c/p/a\n\nSpec-Commit: abc123")
	res, err = mk(false).Land(ctx, desired)
	if err != nil {
		t.Fatal(err)
	}
	if res.PullRequest == nil || !res.PullRequest.Created || !cmp.Equal(res.Paths, []string{"apps/c/p/a/web/deployment-a-web.yaml"}) {
		t.Errorf("landing: %+v", res)
	}
	if got := gittest.Git(t, bare, "show", "fleet/render:deploy/apps/c/p/a/web/deployment-a-web.yaml"); got != gen+"v2\n" {
		t.Errorf("the head branch holds %q", got)
	}
	if got := gittest.Git(t, bare, "show", "fleet/render:deploy/apps/c/p/a/web/notes.txt"); got != "by hand\n" {
		t.Errorf("a file render did not generate was not kept: %q", got)
	}
}

// TestDirFinishesAnInterruptedChange: a journal an interrupted run left
// is dealt with before the folder is compared, so no temporary file stays.
func TestDirFinishesAnInterruptedChange(t *testing.T) {
	t.Parallel()
	for _, indexed := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "indexed"}[indexed], func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			dir := "apps/c/p/a/web/"
			golden.WriteFile(t, filepath.Join(root, dir+"deployment-a-web.yaml"), gen+"v1\n")
			golden.WriteFile(t, filepath.Join(root, dir+".fleetwright-tmp-other.yaml"), gen+"v")
			// Killed before the journal was sealed: the change is undone.
			golden.WriteFile(t, filepath.Join(root, fleet.JournalName),
				"fleetwright journal 1\nr \""+dir+".fleetwright-tmp-other.yaml\" \""+dir+"other.yaml\"\n")
			var s sink.Sink = &sink.Dir{Root: root, Managed: []string{"apps/c"}}
			if indexed {
				s = sink.NewIndexed(s.(*sink.Dir), filepath.Join(t.TempDir(), "index"))
			}
			if _, err := s.Land(t.Context(), desired); err != nil {
				t.Fatal(err)
			}
			var got []string
			err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(root, p)
					got = append(got, filepath.ToSlash(rel))
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]string{dir + "deployment-a-web.yaml"}, got); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
		})
	}
}

// TestPrevious: every sink reads and lists the fleet as it is, by paths
// from the fleet root, a Push's from the fleet folder of its branch.
func TestPrevious(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	files := map[string]string{
		"clusters/c/projects/p.yaml": gen + "p\n",
		"clusters/c/projects/q.yaml": gen + "q\n",
		"clusters/c/apps/p-a.yaml":   gen + "a\n",
	}
	root := t.TempDir()
	inRepo := map[string]string{"README.md": "fleet\n", "clusters/c/projects/outside.yaml": "x\n"}
	for p, b := range files {
		golden.WriteFile(t, filepath.Join(root, p), b)
		inRepo["deploy/"+p] = b
	}
	if err := os.Mkdir(filepath.Join(root, "clusters/c/projects/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	gs := gittest.NewServer(t)
	url := gs.CreateRepo(t, "fleet.git", "main", inRepo)
	sinks := map[string]sink.Previewer{
		"dir":     &sink.Dir{Root: root},
		"indexed": sink.NewIndexed(&sink.Dir{Root: root}, filepath.Join(t.TempDir(), "index")),
		"push":    &sink.Push{Remote: gitrepo.Remote{URL: url}, Branch: "main", Path: "./deploy/", Workdir: t.TempDir(), Author: bot},
	}
	for name, s := range sinks {
		before, err := s.Previous(ctx, []string{"clusters/c/apps", "clusters/c/projects"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := before.List("clusters/c/projects"), []string{"clusters/c/projects/p.yaml", "clusters/c/projects/q.yaml"}; !cmp.Equal(got, want) {
			t.Errorf("%s: List = %q, want %q", name, got, want)
		}
		if got := before.List("clusters/d/projects"); len(got) != 0 {
			t.Errorf("%s: List of a missing folder = %q", name, got)
		}
		if b, ok := before.Read("clusters/c/apps/p-a.yaml"); !ok || string(b) != gen+"a\n" {
			t.Errorf("%s: Read = %q, %v", name, b, ok)
		}
	}
}

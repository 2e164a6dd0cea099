package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/cli"
	gh "github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/review"
	"github.com/fleetwright/fleetwright/internal/review/charts"
)

// reviewFlags are the flags of render review, with the pull request's
// defaults from $GITHUB_EVENT_PATH filled in.
type reviewFlags struct {
	base, head     string
	pr             int
	ghRepo, ghAPI  string
	diffFile, path string
	post           bool
	charts         bool
	chartCache     string
}

func parseReviewFlags(args []string, io stdio) (*reviewFlags, error) {
	var f reviewFlags
	fs := newFlags("render review", io)
	fs.StringVar(&f.base, "base", "", "base revision (default: the pull request's base from $GITHUB_EVENT_PATH)")
	fs.StringVar(&f.head, "head", "", "head revision (default: the pull request's head, else HEAD)")
	fs.IntVar(&f.pr, "pr", 0, "pull request number to comment on (default: from $GITHUB_EVENT_PATH); 0 prints the comment")
	fs.StringVar(&f.ghRepo, "github-repo", "", "owner/name of the apps repository (default: $GITHUB_REPOSITORY)")
	fs.StringVar(&f.ghAPI, "github-api", "", "GitHub API root (default: $GITHUB_API_URL or https://api.github.com/)")
	fs.StringVar(&f.diffFile, "diff-file", "", "write the full diff here")
	fs.BoolVar(&f.post, "post", true, "post the comment on the pull request (false: print it)")
	fs.BoolVar(&f.charts, "charts", true, "render the charts of the HelmReleases that change and show their objects (false: show HelmReleases as the fleet has them)")
	fs.StringVar(&f.chartCache, "chart-cache", "", "folder of the chart archives fetched, by digest (default: fleetwright/charts in the user cache folder)")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 1 {
		return nil, cli.Usagef("review takes one apps repository path")
	}
	f.path = "."
	if fs.NArg() == 1 {
		f.path = fs.Arg(0)
	}
	return &f, nil
}

// chartRenderer renders charts with Helm, caching archives in the
// folder --chart-cache names, or below the user cache folder; nil with
// --charts=false.
func (f *reviewFlags) chartRenderer(io stdio) review.Charts {
	if !f.charts {
		return nil
	}
	dir := f.chartCache
	if dir == "" {
		userCache := func() (string, error) {
			if d := io.getenv("XDG_CACHE_HOME"); d != "" {
				return d, nil
			}
			if h := io.getenv("HOME"); h != "" {
				return filepath.Join(h, ".cache"), nil
			}
			return "", errors.New("no HOME")
		}
		dir, _ = charts.DefaultCacheDir(userCache) // none: no cache
	}
	return charts.New(charts.Options{CacheDir: dir, HTTPClient: &http.Client{Timeout: time.Minute}})
}

// fromEvent fills what the flags leave out from the pull request event.
func (f *reviewFlags) fromEvent(ev review.Event) error {
	f.base, f.head = cmp.Or(f.base, ev.Base), cmp.Or(f.head, ev.Head, "HEAD")
	if f.base == "" {
		return cli.Usagef("review needs --base (or a pull_request event in $GITHUB_EVENT_PATH)")
	}
	f.pr = cmp.Or(f.pr, ev.Number)
	return nil
}

// runReview renders the apps repository at the pull request's base and head
// (both read from Git, not the work tree) and posts one comment, edited in
// place on every push, that shows what the change does to the fleet.
func runReview(ctx context.Context, args []string, io stdio) error {
	f, err := parseReviewFlags(args, io)
	if err != nil {
		return err
	}
	root, err := cli.FindRoot(f.path)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	if err := f.fromEvent(review.ReadEvent(io.getenv("GITHUB_EVENT_PATH"))); err != nil {
		return err
	}
	g, err := render.OpenGit(root)
	if errors.As(err, new(*render.NotGitError)) {
		return cli.Usagef("%s is not in a Git repository", root)
	} else if err != nil {
		return err
	}
	defer g.Close()
	progress := cli.NewProgress(io.err, cli.IsTerminal(io.err))
	res, err := render.Review(ctx, render.ReviewOptions{
		Base: g.At(f.base), Head: g.At(f.head), Progress: progress,
		FullDiffHint: "the full diff is in the job summary",
		Charts:       f.chartRenderer(io),
		PR:           f.pr,
	})
	progress.Done()
	if err != nil {
		return err
	}
	if res.Comment == nil {
		rep := &cli.Reporter{Out: io.out, Getenv: io.getenv}
		if err := rep.Report(res.HeadProblems, nil); err != nil {
			return err
		}
	}
	outputs, err := reviewOutputs(res, f, io)
	if err != nil {
		return err
	}
	if err := postReview(ctx, res.Body, f, outputs, io); err != nil {
		return err
	}
	cli.SetOutputs(io.getenv, io.out, outputs)
	if res.Comment == nil {
		return cli.Failed()
	}
	return nil
}

// reviewOutputs writes the full diff where asked and into the job summary,
// and returns the step outputs so far.
func reviewOutputs(res *render.ReviewResult, f *reviewFlags, io stdio) (map[string]string, error) {
	outputs := map[string]string{}
	c := res.Comment
	if c == nil {
		return outputs, nil
	}
	outputs["changed-apps"] = strings.Join(c.Changed, ",")
	if f.diffFile != "" {
		if err := os.WriteFile(f.diffFile, []byte(c.FullDiff), 0o644); err != nil {
			return nil, err
		}
		outputs["diff-file"] = f.diffFile
	}
	cli.AddStepSummary(io.getenv, io.out, review.StepSummary(res.Body, c.FullDiff))
	return outputs, nil
}

// postReview posts the comment on the pull request, or prints it when
// there is none to post to.
func postReview(ctx context.Context, body string, f *reviewFlags, outputs map[string]string, io stdio) error {
	if !f.post || f.pr == 0 {
		fmt.Fprint(io.out, body)
		return nil
	}
	client, r, ok, err := githubClient(f.ghRepo, f.ghAPI, io)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprint(io.out, body)
		return nil
	}
	cm, err := review.Post(ctx, client, r, f.pr, body)
	if err != nil {
		return err
	}
	outputs["comment-url"] = cm.URL
	fmt.Fprintf(io.err, "review comment on #%d: %s (written: %v)\n", f.pr, cm.URL, cm.Written())
	return nil
}

// githubClient is the GitHub client of the repository the flags
// (--github-repo, --github-api-url) or the Actions environment
// ($GITHUB_REPOSITORY, $GITHUB_API_URL) name, with $GITHUB_TOKEN; ok is
// false without a token or a repository.
func githubClient(repoFlag, apiFlag string, io stdio) (client *gh.Client, r gh.Repo, ok bool, err error) {
	repoName := cmp.Or(repoFlag, io.getenv("GITHUB_REPOSITORY"))
	token := io.getenv("GITHUB_TOKEN")
	if token == "" || repoName == "" {
		return nil, gh.Repo{}, false, nil
	}
	if r, err = gh.ParseRepo(repoName); err != nil {
		return nil, gh.Repo{}, false, cli.Usagef("--github-repo: %v", err)
	}
	if client, err = gh.New(gh.Config{BaseURL: cmp.Or(apiFlag, io.getenv("GITHUB_API_URL")), Token: token}); err != nil {
		return nil, gh.Repo{}, false, err
	}
	return client, r, true, nil
}

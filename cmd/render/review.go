package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/generate"
	gh "github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/review"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// maxSummary keeps the step summary under GitHub's 1 MiB limit.
const maxSummary = 1000 << 10

// runReview renders the apps repository at the pull request's base and head
// (both read from Git, not the work tree) and posts one comment, edited in
// place on every push, that shows what the change does to the fleet.
func runReview(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render review", io)
	baseRef := fs.String("base", "", "base revision (default: the pull request's base from $GITHUB_EVENT_PATH)")
	headRef := fs.String("head", "", "head revision (default: the pull request's head, else HEAD)")
	prNum := fs.Int("pr", 0, "pull request number to comment on (default: from $GITHUB_EVENT_PATH); 0 prints the comment")
	ghRepo := fs.String("github-repo", "", "owner/name of the apps repository (default: $GITHUB_REPOSITORY)")
	ghAPI := fs.String("github-api", "", "GitHub API root (default: $GITHUB_API_URL or https://api.github.com/)")
	diffFile := fs.String("diff-file", "", "write the full diff here")
	post := fs.Bool("post", true, "post the comment on the pull request (false: print it)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return cli.Usagef("review takes one apps repository path")
	}
	p := "."
	if fs.NArg() == 1 {
		p = fs.Arg(0)
	}
	root, err := cli.FindRoot(p)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	ev := readEvent(io.getenv("GITHUB_EVENT_PATH"))
	if *baseRef == "" {
		*baseRef = ev.PullRequest.Base.SHA
	}
	if *headRef == "" {
		*headRef = ev.PullRequest.Head.SHA
	}
	if *headRef == "" {
		*headRef = "HEAD"
	}
	if *baseRef == "" {
		return cli.Usagef("review needs --base (or a pull_request event in $GITHUB_EVENT_PATH)")
	}
	if *prNum == 0 {
		*prNum = ev.PullRequest.Number
	}
	top, rel, ok := gitTop(root)
	if !ok {
		return cli.Usagef("%s is not in a Git repository", root)
	}
	g, err := gitrepo.Open(top)
	if err != nil {
		return err
	}
	defer g.Close()
	loader, err := spec.NewLoader(exportCatalog(), root)
	if err != nil {
		return err
	}
	side := func(ref string) (*spec.Repo, spec.Problems, map[string][]byte, error) {
		files, modes, err := g.TreeModes(ctx, ref, rel)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("reading %s: %w", ref, err)
		}
		if rel != "." && rel != "" {
			files, modes = stripPrefix(files, rel), stripPrefix(modes, rel)
		}
		repo, ps := loader.LoadFiles(files)
		if ps.HasErrors() {
			return repo, ps, nil, nil
		}
		images, err := reviewImages(repo, files, modes)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("reading %s: %w", ref, err)
		}
		f, err := generate.Render(repo, generate.Options{Images: images})
		if err != nil {
			return nil, nil, nil, err
		}
		return repo, ps, f.Map(), nil
	}
	baseRepo, _, base, err := side(*baseRef)
	if err != nil {
		return err
	}
	if base == nil {
		base = map[string][]byte{} // a broken base shows everything as new
	}
	headRepo, headProblems, head, err := side(*headRef)
	if err != nil {
		return err
	}
	var body string
	var c *review.Comment
	if head == nil {
		rep := &cli.Reporter{Out: io.out, Getenv: io.getenv}
		if err := rep.Report(headProblems, nil); err != nil {
			return err
		}
		body = invalidComment(headProblems)
	} else {
		c = review.Build(review.Input{Base: base, Head: head, BaseRepo: baseRepo, HeadRepo: headRepo,
			FullDiffHint: "the full diff is in the job summary"})
		body = c.Body
	}
	outputs := map[string]string{}
	if c != nil {
		outputs["changed-apps"] = strings.Join(c.Changed, ",")
		if *diffFile != "" {
			if err := os.WriteFile(*diffFile, []byte(c.FullDiff), 0o644); err != nil {
				return err
			}
			outputs["diff-file"] = *diffFile
		}
		if io.getenv("GITHUB_ACTIONS") == "true" && io.getenv("GITHUB_STEP_SUMMARY") != "" {
			a := githubactions.New(githubactions.WithGetenv(io.getenv), githubactions.WithWriter(io.out))
			summary := body
			if len(c.FullDiff) > 0 && len(summary)+len(c.FullDiff) < maxSummary {
				summary += "\n### Full diff\n\n```diff\n" + c.FullDiff + "```\n"
			}
			a.AddStepSummary(summary)
		}
	}
	repoName := *ghRepo
	if repoName == "" {
		repoName = io.getenv("GITHUB_REPOSITORY")
	}
	token := io.getenv("GITHUB_TOKEN")
	if !*post || *prNum == 0 || token == "" || repoName == "" {
		fmt.Fprint(io.out, body)
	} else {
		r, err := gh.ParseRepo(repoName)
		if err != nil {
			return cli.Usagef("--github-repo: %v", err)
		}
		api := *ghAPI
		if api == "" {
			api = io.getenv("GITHUB_API_URL")
		}
		client, err := gh.New(gh.Config{BaseURL: api, Token: token})
		if err != nil {
			return err
		}
		cm, err := client.UpsertComment(ctx, r, *prNum, review.Marker, body)
		if err != nil {
			return fmt.Errorf("posting the review comment: %w", err)
		}
		outputs["comment-url"] = cm.URL
		fmt.Fprintf(io.err, "review comment on #%d: %s (written: %v)\n", *prNum, cm.URL, cm.Written())
	}
	if err := setOutputs(io, outputs); err != nil {
		return err
	}
	if head == nil {
		return cli.Failed()
	}
	return nil
}

func invalidComment(ps spec.Problems) string {
	var b strings.Builder
	b.WriteString(review.Marker + "\n## fleetwright: the specs are invalid\n\nNothing can be rendered until these are fixed:\n\n```\n")
	for i, p := range ps {
		if i == 200 {
			fmt.Fprintf(&b, "… and %d more\n", len(ps)-i)
			break
		}
		b.WriteString(p.Error() + "\n")
	}
	b.WriteString("```\n")
	return b.String()
}

type event struct {
	PullRequest struct {
		Number int `json:"number"`
		Base   struct {
			SHA string `json:"sha"`
		} `json:"base"`
		Head struct {
			SHA string `json:"sha"`
		} `json:"head"`
	} `json:"pull_request"`
}

func readEvent(p string) event {
	var ev event
	if p == "" {
		return ev
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return ev
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return event{} // not a pull_request event: the flags must say
	}
	return ev
}

// stripPrefix returns m with the folder prefix taken off its keys.
func stripPrefix[V any](m map[string]V, prefix string) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[strings.TrimPrefix(k, prefix+"/")] = v
	}
	return out
}

// Command release makes fleetwright's release assets and image; run it
// through hack/release.sh, which fills in the commit and the date.
//
//	release build -version v1.2.3 -commit HASH [-out dist] [-platforms linux/amd64,...]
//	release image -version v1.2.3 -commit HASH -repo ghcr.io/OWNER/fleetwright [-dist dist] [-tag T]
//
// SOURCE_DATE_EPOCH is required. The image is pushed with the Docker
// configuration's credentials, and to ghcr.io with GITHUB_TOKEN when it is
// set.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/registry"
	"github.com/fleetwright/fleetwright/internal/release"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv, os.Environ())
	stop()
	os.Exit(cli.CodeAs("release", err, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string, environ []string) error {
	if len(args) == 0 || (args[0] != "build" && args[0] != "image") {
		return cli.Usagef("usage: release build|image -version vX.Y.Z -commit HASH ...")
	}
	fs := flag.NewFlagSet("release "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.String("version", "", "the release, vMAJOR.MINOR.PATCH[-PRERELEASE]")
	commit := fs.String("commit", "", "the full commit hash being released")
	out := fs.String("out", "dist", "build: the folder to write the assets to (empty or missing)")
	platforms := fs.String("platforms", "", "build: comma-separated os/arch list (default darwin and linux, amd64 and arm64)")
	commands := fs.String("commands", "", "build: comma-separated commands (default render,verify,webhook)")
	dist := fs.String("dist", "dist", "image: the folder build wrote")
	repo := fs.String("repo", "", "image: the repository to push to")
	tag := fs.String("tag", "", "image: the tag (default the version)")
	dockerfile := fs.String("dockerfile", "hack/image/Dockerfile", "image: the Dockerfile")
	if err := cli.ParseFlags(fs, args[1:]); err != nil {
		return err
	}
	epochText := getenv("SOURCE_DATE_EPOCH")
	epoch, err := strconv.ParseInt(epochText, 10, 64)
	if err != nil {
		return cli.Usagef("SOURCE_DATE_EPOCH must be set to the release commit's time in seconds, not %q", epochText)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if args[0] == "build" {
		var plats []release.Platform
		for _, s := range split(*platforms) {
			p, err := release.ParsePlatform(s)
			if err != nil {
				return cli.Usagef("-platforms: %v", err)
			}
			plats = append(plats, p)
		}
		root, err := os.Getwd()
		if err != nil {
			return err
		}
		res, err := release.Build(ctx, release.Options{
			Version: *version, Commit: *commit, Epoch: epoch, Root: root, Out: *out,
			Platforms: plats, Commands: split(*commands), Env: environ, Logger: log,
		})
		if err != nil {
			return err
		}
		for _, a := range res.Assets {
			fmt.Fprintf(stdout, "%s  %s\n", a.SHA256, a.Name)
		}
		return nil
	}
	if *repo == "" {
		return cli.Usagef("image: -repo is required")
	}
	kc := registry.Keychain(authn.DefaultKeychain, registry.GitHubCredentials{Username: getenv("GITHUB_ACTOR"), Token: getenv("GITHUB_TOKEN")})
	res, err := release.Image(ctx, release.ImageOptions{
		Dist: *dist, Version: *version, Commit: *commit, Tag: *tag, Epoch: epoch,
		Dockerfile: *dockerfile, Repo: *repo, Logger: log,
		Registry: registry.New(registry.Options{Keychain: kc}),
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &cli.ExitError{Code: cli.ExitFailed, Err: err}
		}
		return err
	}
	fmt.Fprintln(stdout, res.Ref)
	return nil
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

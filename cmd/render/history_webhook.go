package main

import (
	"errors"
	"flag"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/lifecycle"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// webhookFlags locate the webhook whose deployment history history and
// rollback read.
type webhookFlags struct {
	url, tokenFile string
}

// addEnvFlag adds --env, the environment history and rollback are about.
func addEnvFlag(fs *flag.FlagSet) *string {
	return fs.String("env", "", "the environment (platform.yaml environments): the app in its cluster, and the webhook's deployments there only")
}

func addWebhookFlags(fs *flag.FlagSet) *webhookFlags {
	f := &webhookFlags{}
	fs.StringVar(&f.url, "webhook", "", "base URL of the fleetwright webhook, such as https://fleetwright.example.com")
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding the webhook's API bearer token")
	return f
}

// deployments returns a client of the webhook's API, or nil when
// --webhook is not set.
func (f *webhookFlags) deployments() (lifecycle.DeploymentLister, error) {
	if f.url == "" {
		if f.tokenFile != "" {
			return nil, cli.Usagef("--token-file needs --webhook")
		}
		return nil, nil
	}
	d, err := lifecycle.WebhookDeployments(f.url, f.tokenFile)
	if errors.Is(err, api.ErrNotHTTP) {
		return nil, cli.Usagef("--webhook must be an http(s) URL, got %q", f.url)
	}
	return d, err
}

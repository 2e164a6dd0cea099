package gitrepo

import (
	"fmt"

	"github.com/go-git/go-git/v5/config"
)

// RemoteURL returns the first URL of the remote called name.
func (r *Repo) RemoteURL(name string) (string, error) {
	rem, err := r.repo.Remote(name)
	if err != nil {
		return "", err
	}
	urls := rem.Config().URLs
	if len(urls) == 0 {
		return "", fmt.Errorf("remote %s has no URL", name)
	}
	return urls[0], nil
}

// ConfigUser is the commit author Git's configuration names: user.name
// and user.email of the repository's configuration merged with the user's
// global one. ok is false when either is unset or the configuration cannot
// be read.
func (r *Repo) ConfigUser() (sig Signature, ok bool) {
	cfg, err := r.repo.ConfigScoped(config.GlobalScope)
	if err != nil || cfg.User.Name == "" || cfg.User.Email == "" {
		return Signature{}, false
	}
	return Signature{Name: cfg.User.Name, Email: cfg.User.Email}, true
}

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

// User returns user.name and user.email as Git would sign a commit in the
// repository: from its own configuration, else the user's global one; ""
// when unset.
func (r *Repo) User() (name, email string) {
	cfg, err := r.repo.ConfigScoped(config.GlobalScope)
	if err != nil {
		return "", ""
	}
	return cfg.User.Name, cfg.User.Email
}

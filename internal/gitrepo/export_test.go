package gitrepo

// SetBeforePush installs a hook that runs before each push attempt.
func SetBeforePush(r *Repo, f func(attempt int)) { r.beforePush = f }

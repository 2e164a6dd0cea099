package build

import (
	"path"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
)

// SecretUse is one RUN --mount=type=secret of a Dockerfile: the secret's
// id and the RUN's line.
type SecretUse struct {
	ID   string
	Line int
}

// SecretUses lists the secrets the RUN instructions of a Dockerfile mount,
// in order, with ids as written (an id made of variables is not
// expanded). file names the Dockerfile in errors.
func SecretUses(file string, src []byte) ([]SecretUse, error) {
	df, err := parseDockerfile(file, src)
	if err != nil {
		return nil, err
	}
	var out []SecretUse
	for _, st := range df.stages {
		for _, cmd := range st.Commands {
			c, ok := cmd.(*instructions.RunCommand)
			if !ok {
				continue
			}
			// The mount flags are parsed when the command is expanded;
			// words are kept as written.
			if err := c.Expand(func(w string) (string, error) { return w, nil }); err != nil {
				return nil, df.errorf(lineOf(c), "%w", err)
			}
			for _, m := range instructions.GetMounts(c) {
				if m.Type != instructions.MountTypeSecret {
					continue
				}
				id := m.CacheID
				if id == "" && m.Target != "" {
					id = path.Base(m.Target)
				}
				if id != "" {
					out = append(out, SecretUse{ID: id, Line: lineOf(c)})
				}
			}
		}
	}
	return out, nil
}

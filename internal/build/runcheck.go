package build

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// checkCommand makes the working directory of spec when it is missing
// (owned by the user namespace's root) and finds its command in the root
// filesystem as the runtime will, so that a command that is not in the
// image fails as before the runtime starts: exit code 127 with its name.
func (r *rootFS) checkCommand(spec *sandboxSpec) error {
	if err := r.makeDirs(spec.Dir); err != nil {
		return fmt.Errorf("working directory %s: %w", spec.Dir, err)
	}
	file := spec.Args[0]
	argv0 := file
	if !strings.Contains(file, "/") {
		pathEnv := defaultPath
		for _, kv := range spec.Env {
			if v, ok := strings.CutPrefix(kv, "PATH="); ok {
				pathEnv = v
			}
		}
		argv0 = ""
		for _, dir := range strings.Split(pathEnv, ":") {
			if dir == "" {
				dir = "."
			}
			p := path.Join(dir, file)
			if !path.IsAbs(p) {
				p = path.Join(spec.Dir, p)
			}
			if fi, err := r.stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				argv0 = p
				break
			}
		}
		if argv0 == "" {
			return &sandboxError{msg: fmt.Sprintf("%s: not found in $PATH (%s)", file, pathEnv), notFound: true}
		}
	}
	p := argv0
	if !path.IsAbs(p) {
		p = path.Join(spec.Dir, p)
	}
	if spec.Pipes != "" && strings.HasPrefix(p, "/dev/pipes/") {
		return nil // a heredoc script, mounted there
	}
	fi, err := r.stat(p)
	if err != nil {
		return &sandboxError{msg: fmt.Sprintf("%s: no such file in the image", argv0), notFound: true}
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return &sandboxError{msg: fmt.Sprintf("%s: not an executable file", argv0)}
	}
	return nil
}

// stat follows links inside the root filesystem.
func (r *rootFS) stat(p string) (fs.FileInfo, error) {
	rp, err := r.resolve(p, true)
	if err != nil {
		return nil, err
	}
	return r.root.Stat(relName(rp))
}

// makeDirs makes the missing folders of p, each mode 0755 and owned by the
// user namespace's root.
func (r *rootFS) makeDirs(p string) error {
	rp, err := r.resolve(p, true)
	if err != nil {
		return err
	}
	var missing []string
	for q := rp; q != "/"; q = path.Dir(q) {
		fi, err := r.root.Lstat(relName(q))
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a folder", q)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, q)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := r.root.Mkdir(relName(missing[i]), 0o755); err != nil {
			return err
		}
		if err := r.root.Chmod(relName(missing[i]), 0o755); err != nil {
			return err
		}
		if err := r.chownRoot(missing[i]); err != nil {
			return err
		}
	}
	return nil
}

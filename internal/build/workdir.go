package build

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// makeWorkDir makes a folder for one build's unpacked root filesystems and
// layer files below the work folder. As root, the OCI runtime sets a root
// filesystem up as the user namespace's root, an id no account has: the
// folder is made searchable by that id's group, and every folder above it
// must be searchable by anyone.
func (l *Local) makeWorkDir(pattern string) (string, error) {
	d, err := os.MkdirTemp(l.workDir, pattern)
	if err != nil {
		return "", fmt.Errorf("build work directory: %w", err)
	}
	if l.ids.rootless {
		return d, nil
	}
	if err := os.Lchown(d, -1, l.ids.toHost(0, true)); err != nil {
		os.RemoveAll(d)
		return "", fmt.Errorf("build work directory: %w", err)
	}
	if err := os.Chmod(d, 0o710); err != nil {
		os.RemoveAll(d)
		return "", fmt.Errorf("build work directory: %w", err)
	}
	for p := filepath.Dir(d); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			os.RemoveAll(d)
			return "", fmt.Errorf("build work directory: %w", err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			os.RemoveAll(d)
			return "", fmt.Errorf("build work directory %s: RUN's user namespace (host id %d) cannot reach it: %s is not searchable by others (chmod o+x %s, or choose another work folder)", filepath.Dir(d), rootIDBase, p, p)
		}
		if p == filepath.Dir(p) {
			break
		}
	}
	return d, nil
}

// secretFile writes a secret's value to a file a RUN can mount: on a tmpfs
// (/dev/shm) where there is one, so the value never reaches a disk,
// owned and with the mode the mount asks for.
func (x *executor) secretFile(m sandboxMount) (string, error) {
	if err := x.ensureSecretDir(); err != nil {
		return "", err
	}
	x.layerSeq++
	p := filepath.Join(x.secretDir, fmt.Sprintf("secret-%d", x.layerSeq))
	if err := os.WriteFile(p, m.Data, 0o600); err != nil {
		return "", err
	}
	if err := os.Chown(p, x.l.ids.toHost(int(m.UID), false), x.l.ids.toHost(int(m.GID), true)); err != nil && !x.l.ids.rootless {
		os.Remove(p)
		return "", err
	}
	if err := os.Chmod(p, fs.FileMode(m.Mode&0o777)); err != nil {
		os.Remove(p)
		return "", err
	}
	return p, nil
}

// ensureSecretDir makes the build's folder for secret files: on /dev/shm
// when it is a tmpfs, else in the work folder.
func (x *executor) ensureSecretDir() error {
	if x.secretDir != "" {
		return nil
	}
	base := x.workDir
	if isTmpfs("/dev/shm") {
		base = "/dev/shm"
	}
	d, err := os.MkdirTemp(base, "fleetwright-secrets-")
	if err != nil {
		return err
	}
	x.secretDir = d
	return nil
}

// secretRefused is the error of a secret mount in a build of a project
// that may not mount it.
func secretRefused(id, project string, allowed []string) error {
	who := "no project may mount it"
	if len(allowed) > 0 {
		who = "only " + strings.Join(allowed, ", ") + " may"
	}
	if project == "" {
		project = "(none)"
	}
	return fmt.Errorf("secret %q may not be mounted by project %s: platform.yaml build.secrets[].projects says %s", id, project, who)
}

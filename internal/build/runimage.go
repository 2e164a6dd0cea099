package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// runImage unpacks img and runs its entrypoint and command in the RUN
// sandbox, as the image's user, in its working directory, with its
// environment and no network. It returns the exit code.
func (l *Local) runImage(ctx context.Context, img v1.Image, out io.Writer) (int, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return 0, err
	}
	argv := slices.Concat(cf.Config.Entrypoint, cf.Config.Cmd)
	if len(argv) == 0 {
		return 0, errors.New("the image has no entrypoint or command")
	}
	rt, err := l.runtimePath()
	if err != nil {
		return 0, err
	}
	work, err := l.makeWorkDir("fleetwright-run-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	x := &executor{l: l, workDir: work}
	r, err := newRootFS(filepath.Join(work, "rootfs"), l.ids, cf.Created.Time)
	if err != nil {
		return 0, err
	}
	defer r.close()
	layers, err := img.Layers()
	if err != nil {
		return 0, err
	}
	sfs := &stageFS{}
	for _, ly := range layers {
		sfs.layers = append(sfs.layers, fsLayer{remote: ly})
	}
	if err := r.bringUp(sfs); err != nil {
		return 0, fmt.Errorf("unpacking the image: %w", err)
	}
	wd := cf.Config.WorkingDir
	if wd == "" {
		wd = "/"
	}
	spec := sandboxSpec{Args: argv, Env: runEnv(cf.Config, nil), Dir: wd, Hostname: "fleetwright", IDs: l.ids, Limits: l.limits, Init: l.sandboxInit()}
	if spec.UID, spec.GID, spec.Groups, err = runUser(cf.Config.User, r.readFile); err != nil {
		return 0, err
	}
	if _, err := x.prepareSandbox(r, &spec, nil); err != nil {
		return 0, err
	}
	spec.Rootfs = r.dir
	if err := r.checkCommand(&spec); err != nil {
		return 127, err
	}
	l.noLimitsNote()
	res, err := runSandbox(ctx, rt, filepath.Join(work, "runtime"), spec, out, nil)
	return res.Exit, err
}

package cli

import (
	"fmt"
	"os"
	"path/filepath"
)

// isDir reports whether path is a folder.
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// RequireApps refuses a folder that is no apps repository: one with
// neither an apps/ folder nor a platform file, where no spec was found
// either (apps counts them). A render or validate there would say "0
// app(s)" and succeed. An apps repository whose last app was deleted (Git
// keeps no empty apps/ folder) still has its platform file, and renders,
// so that Flux prunes what it ran.
func RequireApps(program, root string, apps int) error {
	if apps > 0 || isRoot(root) {
		return nil
	}
	return Usagef("%s is not an apps repository: expected an apps/ folder holding apps/<project>/<app>/app.yaml "+
		"(with platform.yaml beside it); run %s in the apps repository or give its path", displayDir(root), program)
}

// RequireFleet refuses a folder that is no fleet: one holding none of the
// cluster folders render writes (clusterDirs, slash paths such as
// clusters/prod-eu; clusters/ itself when the platform is unknown). A
// verify there would read every file of an unrelated tree.
func RequireFleet(dir string, clusterDirs []string) error {
	if _, err := os.Stat(dir); err != nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("reading the fleet folder: %w", err)}
	}
	for _, c := range append([]string{"clusters"}, clusterDirs...) {
		if isDir(filepath.Join(dir, filepath.FromSlash(c))) {
			return nil
		}
	}
	return Usagef("%s is not a fleet folder: expected clusters/<cluster>/ (the cluster's Flux files) and apps/<cluster>/ as render writes them; "+
		"give the fleet folder (verify FLEET_DIR), or the apps repository with --apps", displayDir(dir))
}

// displayDir names dir in messages: "the current folder" for ".".
func displayDir(dir string) string {
	if dir == "." || dir == "" {
		if wd, err := os.Getwd(); err == nil {
			return "the current folder (" + wd + ")"
		}
		return "the current folder"
	}
	return dir
}

// PlatformWarning is the warning, once per run, for an apps repository
// without a platform file: everything the platform team owns then takes
// its default, the apps' hosts among them. "" when root has one.
func PlatformWarning(root string, names []string, appsDomain, cluster, fleetPath string) string {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(root, n)); err == nil {
			return ""
		}
	}
	return "warning: " + displayDir(root) + " has no platform.yaml: the defaults apply (hosts <app>-<project>." + appsDomain +
		", cluster " + cluster + ", the fleet in " + fleetPath + "/); write platform.yaml to set them"
}

package verify

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/spectest"
)

// A project granted its own pod security (platform.yaml projects.<name>)
// is held to it: the golden fleet of generate's projects spec is clean,
// project data's pods (CHOWN, root) at baseline; the same pods in a
// namespace the fleet does not define are judged by the project's level
// too, not the platform's restricted one.
func TestProjectPodSecurity(t *testing.T) {
	t.Parallel()
	const specs = "../generate/testdata/specs/projects"
	repo := spectest.Load(t, specs)
	files := map[string][]byte{}
	root := "../generate/testdata/fleets/projects"
	if err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rep := verifyFleet(t, maps.Clone(files), Options{Platform: &repo.Platform})
	if diff := cmp.Diff([]string{}, lines(rep, CheckPodSecurity)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	// Without the project's file, the level comes from platform.yaml.
	for p := range files {
		if strings.HasSuffix(p, "/projects/data.yaml") {
			delete(files, p)
		}
	}
	rep = verifyFleet(t, files, Options{Platform: &repo.Platform})
	if diff := cmp.Diff([]string{}, lines(rep, CheckPodSecurity)); diff != "" {
		t.Errorf("without the project's Namespace: findings (-want +got):\n%s", diff)
	}
	plat := repo.Platform
	plat.Projects = nil
	rep = verifyFleet(t, files, Options{Platform: &plat})
	if got := lines(rep, CheckPodSecurity); len(got) == 0 {
		t.Error("without the project's settings, data's pods pass the platform's restricted level")
	}
}

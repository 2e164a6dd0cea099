package layout_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestNamesAreSpelledHereOnly: the labels, annotations and names render
// writes are spelled in this package only; every other package's code
// asks it (tests may spell what they expect).
func TestNamesAreSpelledHereOnly(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile(`"(fleetwright\.io/|fleetwright\.dev/|app\.kubernetes\.io/|event\.toolkit\.fluxcd\.io/|project-"|clusters/)`)
	self := filepath.Join(root, "internal", "fleet", "layout")
	var found []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == self || (p != root && strings.HasPrefix(d.Name(), ".")) || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if code, _, _ := strings.Cut(line, "//"); literal.MatchString(code) {
				rel, _ := filepath.Rel(root, p)
				found = append(found, rel+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("names of the fleet spelled outside internal/fleet/layout (use its constants and functions):\n%s", strings.Join(found, "\n"))
	}
}

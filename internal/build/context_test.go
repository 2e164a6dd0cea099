package build

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDockerignore(t *testing.T) {
	t.Parallel()
	tree := map[string]tfile{
		"Dockerfile":              {body: "FROM scratch\n"},
		"README.md":               {body: "r"},
		"CHANGES.md":              {body: "c"},
		"main.go":                 {body: "m"},
		"temp":                    {body: "t"},
		"temp1":                   {body: "t"},
		"somedir/temporary.txt":   {body: "t"},
		"somedir/sub/temp.txt":    {body: "t"},
		"docs/keep.md":            {body: "k"},
		"docs/drop.md":            {body: "d"},
		"node_modules/x/index.js": {body: "x"},
		"pkg/a.go":                {body: "a"},
		"pkg/deep/b.go":           {body: "b"},
		"pkg/deep/b_test.go":      {body: "b"},
	}
	all := []string{"CHANGES.md", "Dockerfile", "README.md", "docs", "docs/drop.md", "docs/keep.md", "main.go",
		"node_modules", "node_modules/x", "node_modules/x/index.js", "pkg", "pkg/a.go", "pkg/deep", "pkg/deep/b.go",
		"pkg/deep/b_test.go", "somedir", "somedir/sub", "somedir/sub/temp.txt", "somedir/temporary.txt", "temp", "temp1"}
	without := func(drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(s string) bool { return slices.Contains(drop, s) })
	}
	tests := []struct {
		name   string
		ignore string
		want   []string
	}{
		{"nothing", "", all},
		{"one level wildcard", "*/temp*\n", without("somedir/temporary.txt")},
		{"two levels", "*/*/temp*\n", without("somedir/sub/temp.txt")},
		{"single character", "temp?\n", without("temp1")},
		{"any depth", "**/*.go\n", without("main.go", "pkg/a.go", "pkg/deep/b.go", "pkg/deep/b_test.go")},
		{"exception", "*.md\n!README.md\n", without("CHANGES.md")},
		{"exception inside an excluded directory", "docs\n!docs/keep.md\n", without("docs", "docs/drop.md")},
		{"later pattern wins", "!README.md\n*.md\n", without("CHANGES.md", "README.md")},
		{"directory and comments", "# deps\nnode_modules\n\n/pkg/deep\n", without("node_modules", "node_modules/x", "node_modules/x/index.js", "pkg/deep", "pkg/deep/b.go", "pkg/deep/b_test.go")},
		{"exception deep in an excluded tree", "pkg\n!pkg/**/*_test.go\n", without("pkg", "pkg/a.go", "pkg/deep", "pkg/deep/b.go")},
		{"everything but", "*\n!main.go\n!Dockerfile\n", []string{"Dockerfile", "main.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeTree(t, root, tree)
			if tt.ignore != "" {
				writeTree(t, root, map[string]tfile{".dockerignore": {body: tt.ignore}})
			}
			bc, err := openContext(Request{Root: root, Context: ".", Dockerfile: "Dockerfile"})
			if err != nil {
				t.Fatal(err)
			}
			defer bc.Close()
			var got []string
			for _, f := range bc.files {
				if f.rel != ".dockerignore" {
					got = append(got, f.rel)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("context (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContentTagIgnoresWhatDockerIgnores(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string]tfile{"Dockerfile": {body: "FROM scratch\n"}, ".dockerignore": {body: "logs/\n"}, "a": {body: "a"}})
	req := Request{Root: root}
	base, err := ContentTag(req)
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, root, map[string]tfile{"logs/today": {body: "noise"}})
	if got, _ := ContentTag(req); got != base {
		t.Errorf("an ignored file changed the tag: %s → %s", base, got)
	}
	tests := []struct {
		name  string
		files map[string]tfile
	}{
		{"content", map[string]tfile{"a": {body: "A"}}},
		{"mode", map[string]tfile{"a": {body: "a", mode: 0o755}}},
		{"new file", map[string]tfile{"b": {body: ""}}},
		{"empty directory", map[string]tfile{"d": {mode: fs.ModeDir}}},
		{"Dockerfile", map[string]tfile{"Dockerfile": {body: "FROM scratch \n"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeTree(t, root, map[string]tfile{"Dockerfile": {body: "FROM scratch\n"}, ".dockerignore": {body: "logs/\n"}, "a": {body: "a"}})
			writeTree(t, root, tt.files)
			got, err := ContentTag(Request{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			if got == base {
				t.Errorf("changing the %s kept tag %s", tt.name, got)
			}
		})
	}
}

func TestContentTagOutsideRoot(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	_, err := ContentTag(Request{Root: root, Context: "../x"})
	if !errors.Is(err, ErrOutsideRoot) || !strings.Contains(err.Error(), "build context") {
		t.Errorf("err = %v, want ErrOutsideRoot naming the build context", err)
	}
}

package build_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fleetwright/fleetwright/internal/build"
)

func ExampleContentTag() {
	root, _ := os.MkdirTemp("", "apps")
	defer os.RemoveAll(root)
	for name, body := range map[string]string{
		"Dockerfile":    "FROM scratch\nCOPY app /app\nENTRYPOINT [\"/app\"]\n",
		"app":           "binary",
		".dockerignore": "*.log\n",
		"debug.log":     "not an input",
	} {
		p := filepath.Join(root, name)
		os.WriteFile(p, []byte(body), 0o644)
		os.Chmod(p, 0o644)
	}
	tag, err := build.ContentTag(build.Request{Root: root, Platforms: []string{"linux/amd64"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(tag), tag)
	// Output: 16 4b671ca2fc21136f
}

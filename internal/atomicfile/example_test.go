package atomicfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fleetwright/fleetwright/internal/atomicfile"
)

func ExampleWrite() {
	dir, err := os.MkdirTemp("", "atomicfile-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	name := filepath.Join(dir, "clusters", "prod", "kustomization.yaml")
	if err := atomicfile.Write(name, []byte("kind: Kustomization\n")); err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(name)
	fi, _ := os.Stat(name)
	fmt.Printf("%s%v\n", b, fi.Mode())
	// Output:
	// kind: Kustomization
	// -rw-r--r--
}

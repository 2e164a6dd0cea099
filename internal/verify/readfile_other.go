//go:build !unix

package verify

import "os"

func readFile(name string) ([]byte, error) { return os.ReadFile(name) }

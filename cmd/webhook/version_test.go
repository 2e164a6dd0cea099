package main

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	// -version exits before anything is opened: no store file appears.
	dir := t.TempDir()
	if err := run(t.Context(), []string{"-version", "-sqlite", dir + "/h.db"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "webhook ") || !strings.Contains(out.String(), "\ngo:     "+runtime.Version()+" ") {
		t.Errorf("stdout:\n%s", out.String())
	}
}

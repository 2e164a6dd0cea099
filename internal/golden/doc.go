// Package golden compares test output with golden files under testdata/
// and rewrites them when the tests run with -update:
//
//	go test ./internal/generate/ -update
//
// File compares one file, Tree a whole folder (files missing, extra and
// different are each reported). Differences are shown with cmp.Diff,
// golden first. WriteFiles, TempFiles, WriteFile, ReadFiles and ReadBytes
// write and read a test's fixture tree, PackChart packs a chart folder as
// helm does. Importing the package registers the -update flag, once for
// the test binary.
package golden

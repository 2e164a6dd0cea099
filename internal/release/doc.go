// Package release makes fleetwright's release assets and its container
// image, byte for byte the same on every run from the same commit and Go
// release.
//
// [Build] compiles render, verify and webhook for each platform with the
// Go toolchain (CGO off, -trimpath, no VCS stamping, no build ID, the
// version, commit and date set with -X), then writes for each platform a
// tar.gz archive (entries sorted, one modification time, owner 0:0, fixed
// modes, a gzip header without name or time), an SPDX 2.3 SBOM made from
// the build information the toolchain embedded in each binary, and one
// SHA256SUMS file over all of them in the format of sha256sum.
//
// [Image] builds the container image from those archives with
// fleetwright's daemonless builder (internal/build): the Dockerfile copies
// the released linux binaries into an image FROM scratch, so the image
// holds exactly what the archives hold, and its digest depends only on
// them, the Dockerfile and the date.
package release

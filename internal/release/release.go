package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Platform is one target of a release.
type Platform struct {
	OS, Arch string
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// ParsePlatform parses os/arch.
func ParsePlatform(s string) (Platform, error) {
	os, arch, ok := strings.Cut(s, "/")
	if !ok || os == "" || arch == "" || strings.Contains(arch, "/") {
		return Platform{}, fmt.Errorf("platform %q: want os/arch", s)
	}
	return Platform{OS: os, Arch: arch}, nil
}

// DefaultPlatforms are the platforms a release is built for.
func DefaultPlatforms() []Platform {
	return []Platform{{"darwin", "amd64"}, {"darwin", "arm64"}, {"linux", "amd64"}, {"linux", "arm64"}}
}

// DefaultCommands are the programs each archive holds.
func DefaultCommands() []string { return []string{"render", "verify", "webhook"} }

// Module is the module path the version variables live in.
const Module = "github.com/fleetwright/fleetwright"

// SumsFile is the name of the checksum file.
const SumsFile = "SHA256SUMS"

var versionRE = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// IsVersion reports whether v names a release: vMAJOR.MINOR.PATCH with an
// optional pre-release part (v1.2.3, v1.3.0-rc.1).
func IsVersion(v string) bool { return versionRE.MatchString(v) }

// Options configure Build.
type Options struct {
	// Version is the release, e.g. v1.2.3. Required.
	Version string
	// Commit is the full commit hash the release is built from. Required.
	Commit string
	// Epoch is SOURCE_DATE_EPOCH: the build date of the binaries and the
	// time of every archive entry.
	Epoch int64
	// Root is the module's folder. Required.
	Root string
	// Out is the folder the assets are written to; it must be empty or
	// missing.
	Out string
	// Platforms default to DefaultPlatforms, Commands to DefaultCommands.
	Platforms []Platform
	Commands  []string
	// Go is the go command; default "go" from PATH.
	Go string
	// Env is the environment go runs in (os.Environ() in a main); the
	// variables that decide the output are set over it.
	Env []string
	// Logger receives progress; nil discards.
	Logger *slog.Logger
}

// Asset is one file of a release.
type Asset struct {
	Name   string // file name in Out
	SHA256 string // hex
}

// Result lists what Build wrote, in SHA256SUMS order.
type Result struct {
	Assets []Asset
}

// ArchiveName is the archive of a version and platform:
// fleetwright_1.2.3_linux_amd64.tar.gz.
func ArchiveName(version string, p Platform) string {
	return "fleetwright_" + strings.TrimPrefix(version, "v") + "_" + p.OS + "_" + p.Arch + ".tar.gz"
}

// SBOMName is the SBOM that goes with an archive.
func SBOMName(version string, p Platform) string {
	return strings.TrimSuffix(ArchiveName(version, p), ".tar.gz") + ".sbom.spdx.json"
}

func (o *Options) check() error {
	var errs []error
	if !IsVersion(o.Version) {
		errs = append(errs, fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH[-PRERELEASE], e.g. v1.2.3", o.Version))
	}
	if o.Commit == "" {
		errs = append(errs, errors.New("no commit"))
	}
	if o.Epoch < 0 {
		errs = append(errs, fmt.Errorf("SOURCE_DATE_EPOCH %d is negative", o.Epoch))
	}
	if o.Root == "" || o.Out == "" {
		errs = append(errs, errors.New("root and out folders are required"))
	}
	if len(o.Platforms) == 0 {
		o.Platforms = DefaultPlatforms()
	}
	if len(o.Commands) == 0 {
		o.Commands = DefaultCommands()
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return errors.Join(errs...)
}

// Build compiles the commands for every platform and writes the archives,
// their SBOMs and SHA256SUMS into Out.
func Build(ctx context.Context, o Options) (Result, error) {
	if err := o.check(); err != nil {
		return Result{}, err
	}
	if err := emptyDir(o.Out); err != nil {
		return Result{}, err
	}
	work, err := os.MkdirTemp("", "fleetwright-release-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(work)

	date := time.Unix(o.Epoch, 0).UTC()
	var assets []Asset
	for _, p := range o.Platforms {
		bin := filepath.Join(work, p.OS+"_"+p.Arch)
		o.Logger.Info("building", "platform", p.String(), "commands", strings.Join(o.Commands, ","))
		if err := o.compile(ctx, p, bin, date); err != nil {
			return Result{}, err
		}
		files := make([]archiveFile, 0, len(o.Commands))
		for _, c := range slices.Sorted(slices.Values(o.Commands)) {
			b, err := os.ReadFile(filepath.Join(bin, c))
			if err != nil {
				return Result{}, err
			}
			files = append(files, archiveFile{name: c, mode: 0o755, body: b})
		}
		var arc bytes.Buffer
		if err := writeArchive(&arc, files, date); err != nil {
			return Result{}, err
		}
		archive := ArchiveName(o.Version, p)
		sbom, err := makeSBOM(sbomInput{
			version: o.Version, archive: archive, archiveSum: sum(arc.Bytes()), date: date,
			binDir: bin, commands: slices.Sorted(slices.Values(o.Commands)),
		})
		if err != nil {
			return Result{}, fmt.Errorf("SBOM of %s: %w", archive, err)
		}
		for _, f := range []struct {
			name string
			body []byte
		}{{archive, arc.Bytes()}, {SBOMName(o.Version, p), sbom}} {
			if err := os.WriteFile(filepath.Join(o.Out, f.name), f.body, 0o644); err != nil {
				return Result{}, err
			}
			assets = append(assets, Asset{Name: f.name, SHA256: sum(f.body)})
		}
	}
	slices.SortFunc(assets, func(a, b Asset) int { return strings.Compare(a.Name, b.Name) })
	var sums bytes.Buffer
	for _, a := range assets {
		fmt.Fprintf(&sums, "%s  %s\n", a.SHA256, a.Name)
	}
	if err := os.WriteFile(filepath.Join(o.Out, SumsFile), sums.Bytes(), 0o644); err != nil {
		return Result{}, err
	}
	return Result{Assets: assets}, nil
}

// LDFlags are the linker flags of a release build.
func LDFlags(version, commit string, date time.Time) string {
	pkg := Module + "/internal/version"
	return strings.Join([]string{
		"-s", "-w", "-buildid=",
		"-X", pkg + ".version=" + version,
		"-X", pkg + ".commit=" + commit,
		"-X", pkg + ".date=" + date.UTC().Format(time.RFC3339),
	}, " ")
}

// compile runs one go build for all commands of a platform.
func (o *Options) compile(ctx context.Context, p Platform, out string, date time.Time) error {
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", LDFlags(o.Version, o.Commit, date), "-o", out + string(filepath.Separator)}
	for _, c := range o.Commands {
		args = append(args, "./cmd/"+c)
	}
	cmd := exec.CommandContext(ctx, o.Go, args...)
	cmd.Dir = o.Root
	cmd.Env = append(slices.Clone(o.Env),
		"CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOAMD64=v1", "GOARM64=v8.0",
		"GOFLAGS=-mod=readonly", "GOEXPERIMENT=", "GOTOOLCHAIN=local", "SOURCE_DATE_EPOCH="+fmt.Sprint(o.Epoch))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s: %w\n%s", p, err, stderr.Bytes())
	}
	return nil
}

// emptyDir makes dir, or checks that it is empty, so that no stale asset
// is uploaded with a release.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("output folder %s is not empty (it holds %s): remove it first", dir, ents[0].Name())
	}
	return nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ReadSums parses a SHA256SUMS file: "HEX  NAME" lines, or "HEX *NAME"
// (sha256sum's binary mode).
func ReadSums(r io.Reader) (map[string]string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	sums := map[string]string{}
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if len(line) < 67 || line[64] != ' ' || (line[65] != ' ' && line[65] != '*') ||
			strings.Trim(line[:64], "0123456789abcdef") != "" || strings.ContainsAny(line[66:], "\r\x00") {
			return nil, fmt.Errorf("%s:%d: want \"<sha256 hex>  <file name>\"", SumsFile, i+1)
		}
		sums[line[66:]] = line[:64]
	}
	return sums, nil
}

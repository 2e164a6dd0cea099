// Package version tells which build of fleetwright is running: the release
// version, the commit it was built from, the build date and the Go release
// that compiled it.
//
// A release build sets the version, commit and date at link time
// (hack/release.sh passes -X for the variables below; the date comes from
// SOURCE_DATE_EPOCH, so two builds of one commit are the same bytes). A
// binary built any other way reads what the Go toolchain recorded in it:
// the module version for `go install …@vX.Y.Z`, the VCS revision and time
// for a build inside a Git checkout.
package version

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set with -ldflags "-X github.com/fleetwright/fleetwright/internal/version.version=v1.2.3 ...".
// They are variables only so that the linker can set them; nothing else
// writes them.
var (
	version string
	commit  string
	date    string
)

// Devel is the version of a build that carries none.
const Devel = "devel"

// Info describes one build.
type Info struct {
	// Version is the release (v1.2.3), the module version of a go install,
	// or Devel.
	Version string `json:"version"`
	// Commit is the full Git commit hash, or empty when unknown.
	Commit string `json:"commit,omitempty"`
	// Modified is set when the work tree had changes at build time.
	Modified bool `json:"modified,omitempty"`
	// Date is the build (release) or commit time, RFC 3339 in UTC, or empty.
	Date string `json:"date,omitempty"`
	// GoVersion is the Go release that built the binary (go1.26.8).
	GoVersion string `json:"goVersion"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// Linked holds the values set at link time.
type Linked struct {
	Version, Commit, Date string
}

// Get returns the running binary's build information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return FromBuildInfo(Linked{Version: version, Commit: commit, Date: date}, bi)
}

// FromBuildInfo combines the link-time values with the build information
// the toolchain embedded (bi may be nil). Link-time values win.
func FromBuildInfo(l Linked, bi *debug.BuildInfo) Info {
	info := Info{
		Version:   l.Version,
		Commit:    l.Commit,
		Date:      l.Date,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi == nil {
		if info.Version == "" {
			info.Version = Devel
		}
		return info
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if os, arch := settings["GOOS"], settings["GOARCH"]; os != "" && arch != "" {
		info.Platform = os + "/" + arch
	}
	if info.Version == "" {
		// go install …@v1.2.3 records v1.2.3; a build in a checkout records
		// a pseudo-version (Go 1.24 and later) or "(devel)".
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			info.Version = v
		} else {
			info.Version = Devel
		}
	}
	if info.Commit == "" {
		info.Commit = settings["vcs.revision"]
		info.Modified = settings["vcs.modified"] == "true"
		if info.Commit == "" {
			info.Commit = pseudoCommit(bi.Main.Version)
		}
	}
	if info.Date == "" {
		info.Date = settings["vcs.time"]
	}
	return info
}

// pseudoCommit returns the abbreviated commit of a pseudo-version
// (v0.0.0-20261201104516-d99ceaf6e3b1), or "".
func pseudoCommit(v string) string {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 {
		return ""
	}
	h := v[i+1:]
	for _, c := range h {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return ""
		}
	}
	// The part before the hash ends in a 14-digit timestamp.
	ts := v[:i]
	if j := strings.LastIndexAny(ts, "-."); j < 0 || len(ts)-j-1 != 14 {
		return ""
	}
	return h
}

// String is the one-line form: "v1.2.3 (commit d99ceaf, 2026-12-01T10:45:16Z, go1.26.8 linux/amd64)".
func (i Info) String() string {
	parts := []string{}
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if i.Modified {
			c += "+modified"
		}
		parts = append(parts, "commit "+c)
	}
	if i.Date != "" {
		parts = append(parts, i.Date)
	}
	parts = append(parts, i.GoVersion+" "+i.Platform)
	return i.Version + " (" + strings.Join(parts, ", ") + ")"
}

// Write prints the information for program prog: one field a line, or one
// JSON object.
func (i Info) Write(w io.Writer, prog string, asJSON bool) error {
	if asJSON {
		b, err := json.MarshalIndent(i, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	commit := i.Commit
	if commit == "" {
		commit = "unknown"
	} else if i.Modified {
		commit += " (modified)"
	}
	date := i.Date
	if date == "" {
		date = "unknown"
	}
	_, err := fmt.Fprintf(w, "%s %s\ncommit: %s\nbuilt:  %s\ngo:     %s %s\n", prog, i.Version, commit, date, i.GoVersion, i.Platform)
	return err
}

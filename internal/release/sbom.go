package release

import (
	"cmp"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// The SPDX 2.3 JSON document, with the fields this package writes.
type spdxDoc struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreation       `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreation struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	Name                  string         `json:"name"`
	SPDXID                string         `json:"SPDXID"`
	VersionInfo           string         `json:"versionInfo,omitempty"`
	DownloadLocation      string         `json:"downloadLocation"`
	FilesAnalyzed         bool           `json:"filesAnalyzed"`
	Checksums             []spdxChecksum `json:"checksums,omitempty"`
	PrimaryPackagePurpose string         `json:"primaryPackagePurpose,omitempty"`
	ExternalRefs          []spdxRef      `json:"externalRefs,omitempty"`
	Comment               string         `json:"comment,omitempty"`
}

type spdxChecksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

type spdxRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

type spdxRelationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

type sbomInput struct {
	version, archive, archiveSum string
	date                         time.Time
	binDir                       string
	commands                     []string // sorted
}

var notIDChar = regexp.MustCompile(`[^A-Za-z0-9.-]`)

func spdxID(kind, name string) string {
	return "SPDXRef-" + kind + "-" + notIDChar.ReplaceAllString(name, "-")
}

// purl is a package URL of a Go module (its path's letters as written).
func purl(path, version, subpath string) string {
	s := "pkg:golang/" + path + "@" + version
	if subpath != "" {
		s += "#" + subpath
	}
	return s
}

// makeSBOM describes an archive: the archive contains each binary, and
// each binary depends on the Go modules and the Go standard library its
// embedded build information lists.
func makeSBOM(in sbomInput) ([]byte, error) {
	doc := spdxDoc{
		SPDXVersion:       "SPDX-2.3",
		DataLicense:       "CC0-1.0",
		SPDXID:            "SPDXRef-DOCUMENT",
		Name:              in.archive,
		DocumentNamespace: "https://github.com/fleetwright/fleetwright/releases/" + in.version + "/" + in.archive + "/" + in.archiveSum,
		CreationInfo: spdxCreation{
			Created:  in.date.UTC().Format(time.RFC3339),
			Creators: []string{"Organization: fleetwright", "Tool: fleetwright-release-" + in.version},
		},
	}
	archiveID := spdxID("Archive", in.archive)
	doc.Packages = append(doc.Packages, spdxPackage{
		Name: in.archive, SPDXID: archiveID, VersionInfo: in.version,
		DownloadLocation:      "https://github.com/fleetwright/fleetwright/releases/download/" + in.version + "/" + in.archive,
		Checksums:             []spdxChecksum{{"SHA256", in.archiveSum}},
		PrimaryPackagePurpose: "ARCHIVE",
	})
	doc.Relationships = append(doc.Relationships, spdxRelationship{"SPDXRef-DOCUMENT", "DESCRIBES", archiveID})

	deps := map[string]spdxPackage{} // by SPDXID, shared by the binaries
	var depRels []spdxRelationship
	for _, c := range in.commands {
		path := filepath.Join(in.binDir, c)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		bi, err := buildinfo.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading the build information of %s: %w", c, err)
		}
		binID := spdxID("Binary", c)
		doc.Packages = append(doc.Packages, spdxPackage{
			Name: c, SPDXID: binID, VersionInfo: in.version, DownloadLocation: "NOASSERTION",
			Checksums:             []spdxChecksum{{"SHA256", sum(b)}},
			PrimaryPackagePurpose: "APPLICATION",
			ExternalRefs:          []spdxRef{{"PACKAGE-MANAGER", "purl", purl(bi.Main.Path, in.version, strings.TrimPrefix(bi.Path, bi.Main.Path+"/"))}},
			Comment:               "built by " + bi.GoVersion + " with " + buildSettings(bi),
		})
		doc.Relationships = append(doc.Relationships, spdxRelationship{archiveID, "CONTAINS", binID})

		goVersion := strings.TrimPrefix(bi.GoVersion, "go")
		stdlib := spdxPackage{
			Name: "stdlib", SPDXID: spdxID("Go", "stdlib-"+goVersion), VersionInfo: "v" + goVersion,
			DownloadLocation: "NOASSERTION", PrimaryPackagePurpose: "LIBRARY",
			ExternalRefs: []spdxRef{{"PACKAGE-MANAGER", "purl", purl("stdlib", "v"+goVersion, "")}},
		}
		mods := []spdxPackage{stdlib}
		for _, d := range bi.Deps {
			m := d
			if d.Replace != nil {
				m = d.Replace
			}
			p := spdxPackage{
				Name: m.Path, SPDXID: spdxID("Module", m.Path+"-"+m.Version), VersionInfo: m.Version,
				DownloadLocation: "NOASSERTION", PrimaryPackagePurpose: "LIBRARY",
				ExternalRefs: []spdxRef{{"PACKAGE-MANAGER", "purl", purl(m.Path, m.Version, "")}},
			}
			if m.Sum != "" {
				p.Comment = "go.sum " + m.Sum
			}
			mods = append(mods, p)
		}
		for _, p := range mods {
			if old, ok := deps[p.SPDXID]; ok && (old.Name != p.Name || old.VersionInfo != p.VersionInfo) {
				return nil, fmt.Errorf("SPDX id %s names both %s@%s and %s@%s", p.SPDXID, old.Name, old.VersionInfo, p.Name, p.VersionInfo)
			}
			deps[p.SPDXID] = p
			depRels = append(depRels, spdxRelationship{binID, "DEPENDS_ON", p.SPDXID})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(deps)) {
		doc.Packages = append(doc.Packages, deps[id])
	}
	slices.SortStableFunc(depRels, func(a, b spdxRelationship) int {
		return cmp.Or(strings.Compare(a.Element, b.Element), strings.Compare(a.Related, b.Related))
	})
	doc.Relationships = append(doc.Relationships, depRels...)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// buildSettings lists the settings that shape the binary (GOOS, GOARCH,
// CGO_ENABLED, -trimpath, -ldflags, ...), in the order recorded.
func buildSettings(bi *debug.BuildInfo) string {
	var s []string
	for _, kv := range bi.Settings {
		s = append(s, kv.Key+"="+kv.Value)
	}
	return strings.Join(s, " ")
}

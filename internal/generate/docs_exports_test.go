package generate_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/exports"
)

// docs/spec.md's exports table lists, for each addon type of the catalog,
// exactly the keys it publishes and those read from a Secret.
func TestDocsExportsTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| addon `([a-z]+)` \\| ([^|]*) \\| ([^|]*) \\|")
	rows := map[string][2]string{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		rows[m[1]] = [2]string{m[2], m[3]}
	}
	var c exports.Catalog
	for _, typ := range c.AddonTypes() {
		if typ == "generic" {
			continue
		}
		keys, secret, _ := c.AddonExportKeys(typ)
		var sk []string
		for _, k := range keys {
			if secret[k] {
				sk = append(sk, k)
			}
		}
		quote := func(l []string) string { return "`" + strings.Join(l, "`, `") + "`" }
		got, ok := rows[typ]
		switch {
		case !ok:
			t.Errorf("docs/spec.md has no exports row for addon %s", typ)
		case got[0] != quote(keys):
			t.Errorf("addon %s: the table lists keys %s, the catalog %s", typ, got[0], quote(keys))
		case got[1] != quote(sk):
			t.Errorf("addon %s: the table lists Secret keys %s, the catalog %s", typ, got[1], quote(sk))
		}
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelpVersionCompletion: verify --help lists its flags and examples,
// version and --version both print the version, a mistyped command gets a
// suggestion, and the bash completion completes verify's flags.
func TestHelpVersionCompletion(t *testing.T) {
	t.Parallel()
	r := runVerify(t, nil, "--help")
	if r.code != 0 || !strings.Contains(r.out, "Usage:\n  verify [flags] [FLEET_DIR]") || !strings.Contains(r.out, "\n  --apps string ") ||
		!strings.Contains(r.out, "\nExamples:\n  verify fleet") || strings.Contains(r.out, "(default 0)") {
		t.Errorf("--help: exit %d\n%s%s", r.code, r.out, r.stderr)
	}
	if h := runVerify(t, nil, "help"); h.out != r.out {
		t.Errorf("help differs from --help:\n%s", h.out)
	}
	if h := runVerify(t, nil, "help", "version"); h.code != 0 || !strings.Contains(h.out, "--json") {
		t.Errorf("help version: exit %d\n%s", h.code, h.out)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if v := runVerify(t, nil, args...); v.code != 0 || !strings.HasPrefix(v.out, "verify ") {
			t.Errorf("%v: exit %d\n%s%s", args, v.code, v.out, v.stderr)
		}
	}
	if v := runVerify(t, nil, "verison"); v.code != 2 || !strings.Contains(v.stderr, `unknown command "verison"; did you mean "version"?`) {
		t.Errorf("verison: exit %d\n%s", v.code, v.stderr)
	}
	if v := runVerify(t, nil, "--nope"); v.code != 2 || !strings.Contains(v.stderr, "Run 'verify --help' for its flags and examples.") {
		t.Errorf("--nope: exit %d\n%s", v.code, v.stderr)
	}
	b := runVerify(t, nil, "completion", "bash")
	script := b.out + "\nCOMP_WORDS=(verify --apps-)\nCOMP_CWORD=1\n_verify\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", script)
	cmd.Dir = t.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "--apps-ref" {
		t.Errorf("bash completion of --apps-: %q (%v)", out, err)
	}
}

// TestWrongFolderIsRefused: verify in a folder that holds no fleet (the
// apps repository, the root of a checkout) says what it expected instead
// of reading every file there.
func TestWrongFolderIsRefused(t *testing.T) {
	t.Parallel()
	apps := appsRepo(t, false)
	for _, dir := range []string{apps, t.TempDir(), "../.."} {
		r := runVerify(t, nil, dir)
		if r.code != 2 || !strings.Contains(r.stderr, "is not a fleet folder: expected clusters/<cluster>/") || r.out != "" {
			t.Errorf("verify %s: exit %d\n%s%s", dir, r.code, r.out, r.stderr)
		}
	}
	if r := runVerify(t, nil, filepath.Join(apps, "fleet")); r.code == 2 || strings.Contains(r.stderr, "not a fleet folder") {
		t.Errorf("the fleet folder: exit %d\n%s", r.code, r.stderr)
	}
}

// TestProgressInWords: verify's progress on stderr is render's kind, not
// structured log lines.
func TestProgressInWords(t *testing.T) {
	t.Parallel()
	apps := appsRepo(t, false)
	r := runVerify(t, nil, "--apps", apps)
	if r.code != 0 || strings.Contains(r.stderr, "level=") || strings.Contains(r.stderr, "msg=") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestProjectAlertsAreChecked: the Alerts render writes for each project
// (platform.yaml fleet.notifications) are checked against their API type,
// not passed over as an unknown kind.
func TestProjectAlertsAreChecked(t *testing.T) {
	t.Parallel()
	apps := appsRepoWith(t, false, "  notifications: {}\n")
	r := runVerify(t, nil, "--apps", apps)
	if r.code != 0 || !strings.Contains(r.out, "49 objects") || strings.Contains(r.out, "unknown kind") {
		t.Errorf("exit %d\n%s%s", r.code, r.out, r.stderr)
	}
	shop := filepath.Join(apps, "fleet/clusters/prod-eu/projects/shop.yaml")
	data, err := os.ReadFile(shop)
	if err != nil || !strings.Contains(string(data), "kind: Alert") {
		t.Fatalf("no Alert in %s (%v)", shop, err)
	}
	bad := strings.Replace(string(data), "  eventSeverity: info\n", "  eventSeverity: info\n  evntSources: []\n", 1)
	if err := os.WriteFile(shop, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runVerify(t, nil, "--platform", filepath.Join(apps, "platform.yaml"), filepath.Join(apps, "fleet")); r.code != 1 || !strings.Contains(r.out, "Alert/fleetwright-shop: spec.evntSources: unknown field") {
		t.Errorf("a misspelt field of an Alert: exit %d\n%s", r.code, r.out)
	}
}

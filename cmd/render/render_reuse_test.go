package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/google/go-cmp/cmp"
)

// reuseModel is an apps repository that the test changes at random.
type reuseModel struct {
	domain string
	apps   map[int]*reuseApp
	next   int
}

type reuseApp struct {
	tag, port int
	paused    bool
	cache     bool // a redis addon whose password the web reads
}

func (m *reuseModel) project(i int) string { return "p" + strconv.Itoa(i%3) }

// files returns the repository's files. App i reads the url of app i-3
// (same project) when it exists and i is odd.
func (m *reuseModel) files() map[string]string {
	f := map[string]string{"platform.yaml": "apps_domain: " + m.domain + "\nclusters: [{name: c1}]\nbuild: {pin: false}\n"}
	for i, a := range m.apps {
		var b strings.Builder
		fmt.Fprintf(&b, "name: a%d\npaused: %v\ncomponents:\n", i, a.paused)
		if a.cache {
			b.WriteString("  - name: cache\n    type: addon\n    addon_spec:\n      type: redis\n" +
				"      chart: {repo: oci://registry.example.test/charts, name: redis, version: 19.6.4}\n")
		}
		fmt.Fprintf(&b, "  - name: web\n    type: workload\n    workload_spec:\n      image: reg.example.test/a%d:%d\n      port: %d\n      env:\n        - {name: MODE, value: fast}\n", i, a.tag, a.port)
		if _, ok := m.apps[i-3]; ok && i%2 == 1 {
			fmt.Fprintf(&b, "        - {name: PEER, export_ref: {app: a%d, component: web, export_key: url}}\n", i-3)
		}
		if a.cache {
			b.WriteString("        - {name: CACHE_PASSWORD, export_ref: {component: cache, export_key: password}}\n")
		}
		f[fmt.Sprintf("apps/%s/a%d/app.yaml", m.project(i), i)] = b.String()
	}
	return f
}

func (m *reuseModel) write(t *testing.T, root string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(root, "apps")); err != nil {
		t.Fatal(err)
	}
	golden.WriteFiles(t, root, m.files())
}

func (m *reuseModel) pick(rng *rand.Rand) int {
	keys := make([]int, 0, len(m.apps))
	for k := range m.apps {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys[rng.IntN(len(keys))]
}

// fleetFiles lists the generated files under out, by slash path.
func fleetFiles(t *testing.T, out string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var upToDate = regexp.MustCompile(`\((\d+) app\(s\) up to date`)

// A render that reuses what the fleet index knows gives, byte for byte,
// the fleet a render from scratch gives, whatever changed in between: specs
// edited, added and removed, the platform changed, fleet files edited by
// hand, removed or added. Apps that did not change are not generated again.
func TestIncrementalRenderMatchesFullRender(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	out := filepath.Join(t.TempDir(), "fleet")
	env := map[string]string{"FLEETWRIGHT_CACHE": t.TempDir()}
	m := &reuseModel{domain: "apps.example.test", apps: map[int]*reuseApp{}}
	for m.next = 0; m.next < 12; m.next++ {
		m.apps[m.next] = &reuseApp{tag: 1, port: 8000 + m.next, cache: m.next%5 == 0}
	}
	m.write(t, root)
	if r := runCmd(t, env, "--out", out, root); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	unmanaged := map[string]bool{}
	reused := 0
	for round := range 14 {
		// Let the files written so far age past the index's racy margin,
		// and let a render record them, so that the next can trust them.
		time.Sleep(150 * time.Millisecond)
		r := runCmd(t, env, "--out", out, root)
		if r.code != 0 || !strings.Contains(r.stderr, ": 0 added, 0 updated, 0 deleted,") {
			t.Fatalf("round %d: a render over an unchanged fleet changed it: exit %d\n%s", round, r.code, r.stderr)
		}
		time.Sleep(150 * time.Millisecond)

		var did []string
		// Every kind of change once in the first ten rounds, and one more
		// at random each round.
		for _, op := range []int{round % 10, rng.IntN(10)} {
			files := fleetFiles(t, out)
			switch op {
			case 0:
				i := m.pick(rng)
				m.apps[i].tag++
				did = append(did, fmt.Sprintf("image of a%d", i))
			case 1:
				i := m.pick(rng)
				m.apps[i].port++
				did = append(did, fmt.Sprintf("port of a%d", i))
			case 2:
				if len(m.apps) > 4 {
					i := m.pick(rng)
					delete(m.apps, i)
					did = append(did, fmt.Sprintf("removed a%d", i))
				}
			case 3:
				m.apps[m.next] = &reuseApp{tag: 1, port: 9000 + m.next, cache: rng.IntN(2) == 0}
				did = append(did, fmt.Sprintf("added a%d", m.next))
				m.next++
			case 4:
				i := m.pick(rng)
				m.apps[i].paused = !m.apps[i].paused
				did = append(did, fmt.Sprintf("paused a%d", i))
			case 5:
				p := files[rng.IntN(len(files))]
				if unmanaged[p] {
					break
				}
				b, err := os.ReadFile(filepath.Join(out, p))
				if err != nil {
					t.Fatal(err)
				}
				// Same size, so only the times and the content tell.
				b[len(b)-2] ^= 1
				if err := os.WriteFile(filepath.Join(out, p), b, 0o644); err != nil {
					t.Fatal(err)
				}
				did = append(did, "edited "+p)
			case 6:
				p := files[rng.IntN(len(files))]
				if err := os.Remove(filepath.Join(out, p)); err != nil {
					t.Fatal(err)
				}
				delete(unmanaged, p)
				did = append(did, "deleted "+p)
			case 7:
				p := files[rng.IntN(len(files))]
				stray := filepath.Join(filepath.Dir(p), "configmap-stray.yaml")
				golden.WriteFiles(t, out, map[string]string{stray: "# Code generated by fleetwright. DO NOT EDIT.\nkind: ConfigMap\n"})
				did = append(did, "dropped generated "+filepath.ToSlash(stray))
			case 8:
				m.domain = fmt.Sprintf("apps%d.example.test", round)
				did = append(did, "apps domain")
			case 9:
				p := filepath.Join(filepath.Dir(files[rng.IntN(len(files))]), "NOTES.txt")
				golden.WriteFiles(t, out, map[string]string{p: "written by hand\n"})
				unmanaged[filepath.ToSlash(p)] = true
				did = append(did, "hand-written "+p)
			}
		}
		m.write(t, root)

		r = runCmd(t, env, "--out", out, root)
		if r.code != 0 {
			t.Fatalf("round %d (%v): exit %d\n%s", round, did, r.code, r.stderr)
		}
		if g := upToDate.FindStringSubmatch(r.stderr); g != nil {
			n, _ := strconv.Atoi(g[1])
			reused += n
		}
		for p := range unmanaged {
			if !strings.Contains(r.stderr, filepath.Join(out, p)+" is not generated by fleetwright") {
				t.Errorf("round %d: no warning about %s:\n%s", round, p, r.stderr)
			}
			if layout.InComponentDir(p) && !strings.Contains(r.stderr, filepath.Join(out, p)+" is not generated by fleetwright; left as it is, and Flux does not apply it") {
				t.Errorf("round %d: the warning about %s does not say Flux will not apply it:\n%s", round, p, r.stderr)
			}
		}
		fresh := filepath.Join(t.TempDir(), "fleet")
		if r := runCmd(t, nil, "--out", fresh, root); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		got := snapshot(t, out)
		for p := range unmanaged {
			delete(got, filepath.Join(out, p))
		}
		want := map[string]string{}
		for p, b := range snapshot(t, fresh) {
			rel, _ := filepath.Rel(fresh, p)
			want[filepath.Join(out, rel)] = b
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("round %d (%v): the incremental render differs from a full one (-full +incremental):\n%s", round, did, d)
		}
		t.Logf("round %d: %v: %s", round, did, strings.TrimSpace(r.stderr[strings.LastIndex(r.stderr, "rendered"):]))
		if r := runCmd(t, env, "--check", "--out", out, root); r.code != 0 {
			t.Fatalf("round %d: check after render: exit %d\n%s%s", round, r.code, r.stdout, r.stderr)
		}
	}
	if reused < 14*5 {
		t.Fatalf("only %d apps were found up to date over 14 rounds: the index is not reused", reused)
	}
}

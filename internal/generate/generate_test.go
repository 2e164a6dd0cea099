package generate_test

import (
	"bytes"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/manifest"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

func loadRepo(t testing.TB, files map[string][]byte, root string) *load.Repo {
	t.Helper()
	if files != nil {
		return spectest.LoadFiles(t, files)
	}
	return spectest.Load(t, root)
}

func render(t testing.TB, repo *load.Repo, rev func(*load.LoadedApp) string) map[string][]byte {
	t.Helper()
	f, err := generate.Render(repo, generate.Options{SpecRevision: rev})
	if err != nil {
		t.Fatal(err)
	}
	return f.Map()
}

func revision(a *load.LoadedApp) string { return "0123456789abcdef0123456789abcdef01234567" }

// TestGoldenFleets renders each case folder of testdata/specs and compares
// the whole tree with testdata/fleets/<case>.
func TestGoldenFleets(t *testing.T) {
	t.Parallel()
	cases, err := os.ReadDir("testdata/specs")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			t.Parallel()
			repo := loadRepo(t, nil, filepath.Join("testdata/specs", c.Name()))
			golden.Tree(t, filepath.Join("testdata/fleets", c.Name()), render(t, repo, revision))
		})
	}
}

// TestExamplesRender renders the examples the README's quick start
// renders: the seed's apps, and those of the real-application fields.
func TestExamplesRender(t *testing.T) {
	t.Parallel()
	for root, want := range map[string]string{"../../examples": "testdata/fleets/examples", "../../examples/real-apps": "testdata/fleets/examples-real-apps", "../../examples/environments": "testdata/fleets/examples-environments"} {
		repo := loadRepo(t, nil, root)
		got := render(t, repo, nil)
		golden.Tree(t, want, got)
		for p, b := range got {
			if !bytes.HasPrefix(b, []byte(manifest.Header)) {
				t.Errorf("%s: no DO NOT EDIT header", p)
			}
		}
	}
}

// TestDeterministic renders the same specs read in a different order and
// compares bytes.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{}
	err := filepath.WalkDir("../../examples", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("../../examples", p)
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	first := render(t, loadRepo(t, files, ""), revision)
	for range 5 {
		repo := loadRepo(t, files, "")
		// Reverse the apps: rendering must not depend on the order.
		for i, j := 0, len(repo.Apps)-1; i < j; i, j = i+1, j-1 {
			repo.Apps[i], repo.Apps[j] = repo.Apps[j], repo.Apps[i]
		}
		f, err := generate.Render(repo, generate.Options{SpecRevision: revision, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(first, f.Map()); d != "" {
			t.Fatalf("renders differ:\n%s", d)
		}
	}
}

// TestConnectionStringWiring proves DATABASE_URL reads the password from
// the Secret the postgresql chart creates, and no file holds a password.
func TestConnectionStringWiring(t *testing.T) {
	t.Parallel()
	repo := loadRepo(t, nil, "../../examples")
	got := render(t, repo, nil)
	dep := string(got["apps/prod-eu/my-project/my-api/api/deployment-my-api-api.yaml"])
	want := `        - name: FW_DATABASE_URL_PASSWORD
          valueFrom:
            secretKeyRef:
              key: password
              name: my-api-postgres
        - name: DATABASE_URL
          value: postgresql://myapp:$(FW_DATABASE_URL_PASSWORD)@my-api-postgres.my-project.svc.cluster.local:5432/myapp
`
	if !strings.Contains(dep, want) {
		t.Errorf("deployment does not wire DATABASE_URL through the chart's Secret:\n%s", dep)
	}
	rel := string(got["apps/prod-eu/my-project/my-api/postgres/helmrelease-my-api-postgres.yaml"])
	if !strings.Contains(rel, "fullnameOverride: my-api-postgres") {
		t.Errorf("the release does not pin the chart's object names:\n%s", rel)
	}
	// A credential in plain text would be a value: next to a credential-like
	// name, or a password inside a URL.
	literal := regexp.MustCompile(`(?i)(password|secret|token)[^\n]*\n\s*value: |://[^:/@\s]+:[^$@\s][^@\s]*@`)
	maps.Copy(got, render(t, loadRepo(t, nil, "../../examples/real-apps"), nil))
	for p, b := range got {
		if m := literal.Find(b); m != nil {
			t.Errorf("%s: looks like a credential in plain text: %q", p, m)
		}
	}
}

// TestHealthCheckProbesADeclaredPort: every probe rendered from a spec of
// testdata/specs or the examples names a port its container declares (a
// named port Kubernetes cannot find fails the probe on every pod).
func TestHealthCheckProbesADeclaredPort(t *testing.T) {
	t.Parallel()
	roots := []string{"../../examples", "../../examples/real-apps", "../../examples/environments"}
	cases, err := os.ReadDir("testdata/specs")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		roots = append(roots, filepath.Join("testdata/specs", c.Name()))
	}
	probes := 0
	for _, root := range roots {
		for p, b := range render(t, loadRepo(t, nil, root), nil) {
			if !strings.Contains(p, "/deployment-") && !strings.Contains(p, "/statefulset-") {
				continue
			}
			var obj struct {
				Spec struct {
					Template corev1.PodTemplateSpec `json:"template"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal(b, &obj); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			pod := obj.Spec.Template.Spec
			for _, ctr := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
				for _, pr := range []*corev1.Probe{ctr.ReadinessProbe, ctr.LivenessProbe, ctr.StartupProbe} {
					var port *intstr.IntOrString
					switch {
					case pr == nil:
						continue
					case pr.HTTPGet != nil:
						port = &pr.HTTPGet.Port
					case pr.TCPSocket != nil:
						port = &pr.TCPSocket.Port
					default:
						continue
					}
					probes++
					if port.Type == intstr.String && !slices.ContainsFunc(ctr.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == port.StrVal }) {
						t.Errorf("%s: container %s probes port %q, which it does not declare (%v)", filepath.Join(root, p), ctr.Name, port.StrVal, ctr.Ports)
					}
				}
			}
		}
	}
	if probes < 10 {
		t.Errorf("only %d probes seen", probes)
	}
}
